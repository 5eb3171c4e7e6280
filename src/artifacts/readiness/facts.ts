// What a release's readiness is judged on, read in one go (docs/releases.md, "What belongs to a
// release"): the requirements planned for it, its plans and test runs, the latest result of each case
// in those runs, the `covers` links of the requirements, and the bugs found by its results.
import type { Knex } from 'knex';
import { errors } from '../../errors.js';

export interface LatestResult {
  resultId: string;
  testCaseId: string;
  testRunId: string;
  status: string;
  labels: string[];
  recordedAt: Date;
}

export interface CoversLink {
  linkId: string;
  testCaseId: string;
  requirementId: string;
  /** The specification it covers on the way, when it covers the requirement through one. */
  viaSpecificationId: string | null;
  confirmedAt: Date | null;
}

export interface ReleaseFacts {
  release: { id: string; name: string; status: string; tenantId: string; projectId: string };
  requirements: Array<{ id: string; title: string; contentChangedAt: string | null }>;
  planIds: string[];
  runIds: string[];
  /** Cases of the release's plans and runs, and cases with results in its runs. */
  scopeCaseIds: string[];
  cases: Map<string, { title: string; labels: string[]; quarantined: boolean }>;
  /** The latest result of each case in the release's test runs. */
  latest: Map<string, LatestResult>;
  /** The latest result of each covering case in any test run (whether it ran again after a change). */
  latestAnywhere: Map<string, LatestResult>;
  covers: CoversLink[];
  bugs: Array<{ id: string; title: string; severity: string; status: string; foundBy: string[]; fixedIn: string[] }>;
}

const asResult = (row: { id: string; data: Record<string, unknown>; created_at: Date }): LatestResult => ({
  resultId: row.id,
  testCaseId: String(row.data.testCaseId),
  testRunId: String(row.data.testRunId),
  status: String(row.data.status),
  labels: (row.data.labels as string[] | undefined) ?? [],
  recordedAt: row.created_at,
});

async function latestOf(
  db: Knex,
  projectId: string,
  where: string,
  binding: string[],
): Promise<Map<string, LatestResult>> {
  if (!binding.length) return new Map();
  const { rows } = await db.raw(
    `SELECT DISTINCT ON (data->>'testCaseId') id, data, created_at
       FROM artifacts
      WHERE project_id = ? AND kind = 'test_result' AND ${where} = ANY(?)
      ORDER BY data->>'testCaseId', created_at DESC, id DESC`,
    [projectId, binding],
  );
  return new Map(
    rows.map((r: { id: string; data: Record<string, unknown>; created_at: Date }) => [
      String(r.data.testCaseId),
      asResult(r),
    ]),
  );
}

export async function releaseFacts(db: Knex, projectId: string, releaseId: string): Promise<ReleaseFacts> {
  const release = await db('artifacts')
    .where({ id: releaseId, project_id: projectId, kind: 'release' })
    .first('id', 'data', 'tenant_id');
  if (!release) throw errors.notFound('Release', releaseId);
  const { rows: requirementRows } = await db.raw(
    `SELECT r.id, r.data->>'title' AS title, r.data->>'contentChangedAt' AS changed
       FROM artifacts r
      WHERE r.project_id = :p AND r.kind = 'requirement' AND (
            EXISTS (SELECT 1 FROM artifact_links l
                     WHERE l.from_id = r.id AND l.relation = 'planned_for'
                       AND (l.to_id = :r OR l.to_id IN (SELECT rp.id FROM artifacts rp WHERE rp.project_id = :p AND rp.kind = 'release_plan' AND rp.data->>'releaseId' = :r)))
         OR EXISTS (SELECT 1 FROM artifacts rp
                     WHERE rp.project_id = :p AND rp.kind = 'release_plan' AND rp.data->>'releaseId' = :r AND rp.data->'itemIds' @> jsonb_build_array(r.id)))
      ORDER BY r.id`,
    { p: projectId, r: releaseId },
  );
  const plans: Array<{ id: string; ids: string[] | null }> = await db('artifacts')
    .where({ project_id: projectId, kind: 'test_plan' })
    .whereRaw(`data->>'releaseId' = ?`, [releaseId])
    .orderBy('id')
    .select('id', db.raw(`data->'testCaseIds' AS ids`));
  const { rows: runs } = await db.raw(
    `SELECT t.id, t.data->'testCaseIds' AS ids FROM artifacts t
      WHERE t.project_id = :p AND t.kind = 'test_run'
        AND (t.data->>'releaseId' = :r OR EXISTS (SELECT 1 FROM artifact_links l WHERE l.from_id = t.id AND l.to_id = :r AND l.relation = 'planned_for'))
      ORDER BY t.id`,
    { p: projectId, r: releaseId },
  );
  const runIds: string[] = runs.map((r: { id: string }) => r.id);
  const latest = await latestOf(db, projectId, `data->>'testRunId'`, runIds);
  const scope = new Set<string>([
    ...plans.flatMap((p) => p.ids ?? []),
    ...runs.flatMap((r: { ids: string[] | null }) => r.ids ?? []),
    ...latest.keys(),
  ]);

  const requirementIds = requirementRows.map((r: { id: string }) => r.id);
  const covers: CoversLink[] = [];
  if (requirementIds.length) {
    const { rows } = await db.raw(
      `SELECT l.id, l.from_id, l.to_id, l.confirmed_at, NULL AS spec FROM artifact_links l
        WHERE l.project_id = :p AND l.relation = 'covers' AND l.to_id = ANY(:reqs)
       UNION ALL
       SELECT c.id, c.from_id, s.to_id, c.confirmed_at, s.from_id AS spec FROM artifact_links s
         JOIN artifact_links c ON c.to_id = s.from_id AND c.relation = 'covers'
        WHERE s.project_id = :p AND s.relation = 'specifies' AND s.to_id = ANY(:reqs)
        ORDER BY 3, 2`,
      { p: projectId, reqs: requirementIds },
    );
    for (const row of rows)
      covers.push({
        linkId: row.id,
        testCaseId: row.from_id,
        requirementId: row.to_id,
        viaSpecificationId: row.spec,
        confirmedAt: row.confirmed_at,
      });
  }
  const coveringIds = [...new Set(covers.map((c) => c.testCaseId))];
  const latestAnywhere = await latestOf(db, projectId, `data->>'testCaseId'`, coveringIds);
  const caseIds = [...new Set([...scope, ...coveringIds])];
  const caseRows: Array<{ id: string; data: Record<string, unknown> }> = caseIds.length
    ? await db('artifacts')
        .where({ project_id: projectId, kind: 'test_case' })
        .whereIn('id', caseIds)
        .select('id', 'data')
    : [];
  const cases = new Map(
    caseRows.map((c) => {
      const labels = (c.data.labels as string[] | undefined) ?? [];
      return [
        c.id,
        {
          title: String(c.data.title ?? c.id),
          labels,
          quarantined: c.data.quarantined === true || labels.includes('quarantined'),
        },
      ];
    }),
  );

  const resultIds = [...latest.values()].map((r) => r.resultId);
  const { rows: bugRows } = await db.raw(
    `SELECT b.id, b.data, array_agg(DISTINCT l.to_id) AS found_by,
            coalesce((SELECT array_agg(f.to_id) FROM artifact_links f WHERE f.from_id = b.id AND f.relation = 'fixed_in'), '{}') AS fixed_in
       FROM artifacts b
       JOIN artifact_links l ON l.from_id = b.id AND l.relation = 'found_by'
       JOIN artifacts t ON t.id = l.to_id
      WHERE b.project_id = :p AND b.kind = 'bug'
        AND (t.id = ANY(:runs) OR t.id = ANY(:cases) OR t.id = ANY(:results)
             OR (t.kind = 'test_result' AND t.data->>'testRunId' = ANY(:runs)))
      GROUP BY b.id
      ORDER BY b.id`,
    { p: projectId, runs: runIds, cases: [...scope], results: resultIds },
  );
  return {
    release: {
      id: release.id,
      name: String(release.data.name),
      status: String(release.data.status),
      tenantId: release.tenant_id,
      projectId,
    },
    requirements: requirementRows.map((r: { id: string; title: string; changed: string | null }) => ({
      id: r.id,
      title: r.title,
      contentChangedAt: r.changed,
    })),
    planIds: plans.map((p) => p.id),
    runIds,
    scopeCaseIds: [...scope],
    cases,
    latest,
    latestAnywhere,
    covers,
    bugs: bugRows.map((b: { id: string; data: Record<string, unknown>; found_by: string[]; fixed_in: string[] }) => ({
      id: b.id,
      title: String(b.data.title),
      severity: String(b.data.severity ?? 'major'),
      status: String(b.data.status ?? 'open'),
      foundBy: b.found_by,
      fixedIn: b.fixed_in,
    })),
  };
}
