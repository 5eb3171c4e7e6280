// The artifacts room's side of the ai room's BugLinkSource (src/ai/bug-links.ts): the bugs linked, in
// either direction and by any relation, to test cases or to the test results an OTP run recorded for
// a case. Spelled structurally: the artifacts room does not import the ai room.
import type { Db } from '../db/connect.js';

interface BugLinkDbRow {
  bug_id: string;
  title: string | null;
  status: string | null;
  relation: string;
  target: 'test_case' | 'test_result';
  target_id: string;
  test_case_id: string;
  run_id: string | null;
}

export class ArtifactBugLinks {
  constructor(private readonly db: Db) {}

  async linkedBugs(
    projectId: string,
    testCaseIds: readonly string[],
    results: ReadonlyArray<{ runId: string; testCaseId: string }>,
  ) {
    if (testCaseIds.length === 0 && results.length === 0) return [];
    // Test results by the unique (otpRunId, testCaseId) index; links by either end's index.
    const { rows } = await this.db.raw(
      `WITH targets AS (
         SELECT a.id, 'test_case' AS target, a.id AS test_case_id, NULL::text AS run_id
           FROM artifacts a WHERE a.kind = 'test_case' AND a.project_id = :p AND a.id = ANY(:cases)
         UNION ALL
         SELECT a.id, 'test_result', a.data->>'testCaseId', a.data->>'otpRunId'
           FROM unnest(:runs::text[], :runCases::text[]) AS x(run_id, test_case_id)
           JOIN artifacts a ON a.kind = 'test_result' AND a.data->>'otpRunId' = x.run_id AND a.data->>'testCaseId' = x.test_case_id
          WHERE a.project_id = :p),
       ends AS (
         SELECT t.*, l.relation, l.from_id AS other FROM targets t JOIN artifact_links l ON l.to_id = t.id
         UNION ALL
         SELECT t.*, l.relation, l.to_id FROM targets t JOIN artifact_links l ON l.from_id = t.id)
       SELECT b.id AS bug_id, b.data->>'title' AS title, b.data->>'status' AS status, e.relation, e.target,
              e.id AS target_id, e.test_case_id, e.run_id
         FROM ends e JOIN artifacts b ON b.id = e.other AND b.kind = 'bug' AND b.project_id = :p
        ORDER BY b.created_at DESC, b.id DESC
        LIMIT 1000`,
      {
        p: projectId,
        cases: [...new Set(testCaseIds)],
        runs: results.map((r) => r.runId),
        runCases: results.map((r) => r.testCaseId),
      },
    );
    return (rows as BugLinkDbRow[]).map((r) => ({
      bugId: r.bug_id,
      title: r.title,
      status: r.status,
      relation: r.relation,
      target: r.target,
      targetId: r.target_id,
      testCaseId: r.test_case_id,
      runId: r.run_id,
    }));
  }
}
