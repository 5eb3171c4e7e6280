// GET /tests/runs/:id as JUnit XML or CTRF too (Accept: application/xml, or ?format=junit|ctrf), from
// the test run's latest result per case: the same reports an OTP run gives (src/reports), so a CI
// job reads a round of testing, by hand, by OTP runs or imported, as it reads one run.

import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { reportToCtrf } from '../../reports/ctrf.js';
import { reportToJunit } from '../../reports/junit.js';
import { type ReportedResult, testRunReport } from '../../reports/test-run-report.js';
import { type QueryOf, Representation, type RouteDef } from '../../rest/route.js';
import type { ArtifactStore } from '../store.js';

export const testRunQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      enum: ['json', 'junit', 'ctrf'],
      description:
        'json (the default): the test run; junit: a JUnit XML report of its latest result per case (also asked for by Accept: application/xml); ctrf: a CTRF JSON report',
    },
  },
} as const;
type TestRunQuery = QueryOf<typeof testRunQuery>;

/** The latest result of each case in one test run, and the titles of its cases. */
export async function latestResultsOfRun(db: Db, projectId: string, testRunId: string, caseIds: string[]) {
  const { rows } = await db.raw(
    `SELECT DISTINCT ON (data->>'testCaseId') data
       FROM artifacts
      WHERE project_id = ? AND kind = 'test_result' AND data->>'testRunId' = ?
      ORDER BY data->>'testCaseId', created_at DESC, id DESC`,
    [projectId, testRunId],
  );
  const latest = new Map<string, ReportedResult>(
    rows.map((r: { data: ReportedResult }) => [r.data.testCaseId, r.data]),
  );
  const ids = [...new Set([...caseIds, ...latest.keys()])];
  const cases: Array<{ id: string; title: string }> = ids.length
    ? await db('artifacts')
        .where({ project_id: projectId, kind: 'test_case' })
        .whereIn('id', ids)
        .select('id', db.raw(`data->>'title' AS title`))
    : [];
  return { latest, titles: new Map(cases.map((c) => [c.id, c.title])) };
}

/** The resource's GET route, answering the reports beside the record. */
export function withReportFormats(
  get: RouteDef,
  store: ArtifactStore,
  db: Db,
  publicUrl: string | undefined,
): RouteDef {
  return {
    ...get,
    query: testRunQuery,
    summary: `${get.summary}, or a JUnit XML or CTRF report of its latest result per case`,
    alternates: [
      {
        contentType: 'application/xml',
        schema: { type: 'string', description: 'JUnit XML: one testcase per test case of the run' },
        description: 'JUnit XML with format=junit or Accept: application/xml',
      },
      {
        contentType: 'application/json',
        schema: { $ref: 'CtrfReport' },
        description: 'A CTRF report with format=ctrf',
      },
    ],
    handler: async (ctx) => {
      const { principal, params, koa } = ctx;
      const query = ctx.query as TestRunQuery;
      const format =
        query.format ?? (/\b(application|text)\/(junit\+)?xml\b/.test(koa.get('accept')) ? 'junit' : 'json');
      if (format === 'json') return get.handler(ctx);
      const report = await reportOf(principal, store, db, params.id!);
      const baseUrl = publicUrl ?? koa.origin;
      if (format === 'junit')
        return new Representation(reportToJunit(report, baseUrl), 'application/xml; charset=utf-8');
      return reportToCtrf(report, { baseUrl });
    },
  };
}

async function reportOf(principal: Principal, store: ArtifactStore, db: Db, id: string) {
  const run = await store.get(principal, id);
  const caseIds = (run.testCaseIds as string[] | undefined) ?? [];
  const { latest, titles } = await latestResultsOfRun(db, principal.projectId, id, caseIds);
  return testRunReport(
    {
      id,
      title: String(run.title),
      status: String(run.status),
      planId: (run.planId as string | undefined) ?? null,
      createdAt: String(run.createdAt),
      closedAt: (run.closedAt as string | undefined) ?? null,
      testCaseIds: caseIds,
    },
    titles,
    latest,
  );
}
