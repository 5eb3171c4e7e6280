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
  const requirements = await plannedRequirements(db, projectId, releaseId);
  const plans: Array<{ id: string; ids: string[] | null }> = await db('artifacts')
    .where({ project_id: projectId, kind: 'test_plan' })
    .whereRaw(`data->>'releaseId' = ?`, [releaseId])
    .orderBy('id')
    .select('id', db.raw(`data->'testCaseIds' AS ids`));
  const runs = await releaseRuns(db, projectId, releaseId);
  const runIds = runs.map((r) => r.id);
  const latest = await latestOf(db, projectId, `data->>'testRunId'`, runIds);
  const scope = new Set<string>([
    ...plans.flatMap((p) => p.ids ?? []),
    ...runs.flatMap((r) => r.ids ?? []),
    ...latest.keys(),
  ]);
  const covers = await coversOf(
    db,
    projectId,
    requirements.map((r) => r.id),
  );
  const coveringIds = [...new Set(covers.map((c) => c.testCaseId))];
  const latestAnywhere = await latestOf(db, projectId, `data->>'testCaseId'`, coveringIds);
  const cases = await casesOf(db, projectId, [...new Set([...scope, ...coveringIds])]);
  const resultIds = [...latest.values()].map((r) => r.resultId);
  const bugs = await bugsFound(db, projectId, { runs: runIds, cases: [...scope], results: resultIds });
  return {
    release: {
      id: release.id,
      name: String(release.data.name),
      status: String(release.data.status),
      tenantId: release.tenant_id,
      projectId,
    },
    requirements,
    planIds: plans.map((p) => p.id),
    runIds,
    scopeCaseIds: [...scope],
    cases,
    latest,
    latestAnywhere,
    covers,
    bugs,
  };
}

/** The requirements planned for the release: linked to it or to one of its release plans, or items of such a plan. */
async function plannedRequirements(
  db: Knex,
  projectId: string,
  releaseId: string,
): Promise<ReleaseFacts['requirements']> {
  const { rows } = await db.raw(
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
  return rows.map((r: { id: string; title: string; changed: string | null }) => ({
    id: r.id,
    title: r.title,
    contentChangedAt: r.changed,
  }));
}

/** The release's test runs (naming it, or planned for it) and the cases each lists. */
async function releaseRuns(
  db: Knex,
  projectId: string,
  releaseId: string,
): Promise<Array<{ id: string; ids: string[] | null }>> {
  const { rows } = await db.raw(
    `SELECT t.id, t.data->'testCaseIds' AS ids FROM artifacts t
      WHERE t.project_id = :p AND t.kind = 'test_run'
        AND (t.data->>'releaseId' = :r OR EXISTS (SELECT 1 FROM artifact_links l WHERE l.from_id = t.id AND l.to_id = :r AND l.relation = 'planned_for'))
      ORDER BY t.id`,
    { p: projectId, r: releaseId },
  );
  return rows;
}

/** The `covers` links of the requirements: to each directly, or to a specification that specifies it. */
async function coversOf(db: Knex, projectId: string, requirementIds: string[]): Promise<CoversLink[]> {
  if (!requirementIds.length) return [];
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
  return rows.map(
    (row: { id: string; from_id: string; to_id: string; spec: string | null; confirmed_at: Date | null }) => ({
      linkId: row.id,
      testCaseId: row.from_id,
      requirementId: row.to_id,
      viaSpecificationId: row.spec,
      confirmedAt: row.confirmed_at,
    }),
  );
}

async function casesOf(db: Knex, projectId: string, caseIds: string[]): Promise<ReleaseFacts['cases']> {
  const caseRows: Array<{ id: string; data: Record<string, unknown> }> = caseIds.length
    ? await db('artifacts')
        .where({ project_id: projectId, kind: 'test_case' })
        .whereIn('id', caseIds)
        .select('id', 'data')
    : [];
  return new Map(
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
}

/** The bugs found by the release's runs, its cases, their latest results, or any result of its runs. */
async function bugsFound(
  db: Knex,
  projectId: string,
  by: { runs: string[]; cases: string[]; results: string[] },
): Promise<ReleaseFacts['bugs']> {
  const { rows } = await db.raw(
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
    { p: projectId, ...by },
  );
  return rows.map((b: { id: string; data: Record<string, unknown>; found_by: string[]; fixed_in: string[] }) => ({
    id: b.id,
    title: String(b.data.title),
    severity: String(b.data.severity ?? 'major'),
    status: String(b.data.status ?? 'open'),
    foundBy: b.found_by,
    fixedIn: b.fixed_in,
  }));
}
