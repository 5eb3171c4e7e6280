// What the ai room asks of run history (its `RunHistory` port, src/ai/run-history.ts, wired in
// src/service.ts): each test case's outcome in the project's latest finished runs, and the steps whose
// locator candidates tell of drift. Reads only; bounded by the latest `runs` runs of the project, found
// newest first through the (project_id, id) index (run ids sort by creation), so an answer costs what
// the window holds, not what the project ever ran.
import type { CaseTally } from '../../../machines/case-outcome.js';
import type { Db } from '../../db/connect.js';

/** A test case's attempt in a finished run: its tally (counted and listed here, judged by the ai room). */
export interface CaseAttemptRow extends CaseTally {
  runId: string;
  createdAt: string;
  testCaseId: string;
  version: number | null;
  caseIndex: number;
  /** stepIndex of the case's first step in the run. */
  firstIndex: number;
}

export interface LocatorStepRow {
  runId: string;
  createdAt: string;
  testCaseId: string;
  version: number | null;
  /** The step's place in its test case (0-based). */
  position: number;
  label: string | null;
  status: string;
  /** The step's planned locator ({ candidates: [...] }). */
  locator: { candidates: unknown[] };
  usedLocator: unknown;
  triedLocators: unknown[] | null;
  screenshotAssetId: string | null;
}

const RECENT = `recent AS MATERIALIZED (
  SELECT r.id, r.created_at, r.test_cases FROM otp_runs r
   WHERE r.project_id = :projectId AND r.status IN ('passed', 'failed')
     AND (:testCaseId::text IS NULL OR r.test_cases @> jsonb_build_array(jsonb_build_object('id', :testCaseId::text)))
   ORDER BY r.id DESC LIMIT :runs)`;

// The window's steps are read run by run through the primary key (LATERAL), then grouped by run,
// case and attempt alone; the run's columns are joined to the groups afterwards. Grouping with the
// runs' test_cases (wide jsonb) as a key sorted and spilled to disk, and without LATERAL the planner
// hashed every step row of the table for a wide window. Each group is a CaseTally: the steps that
// passed counted, the others listed; the ai room judges it (machines/case-outcome.ts).
const CASE_ATTEMPTS_SQL = `
WITH ${RECENT},
groups AS (
  SELECT s.run_id, s.case_index, s.attempt, min(s.test_case_id) AS test_case_id,
         count(*) FILTER (WHERE s.status = 'pass')::int AS passed, min(s.step_index) AS first_index,
         coalesce(json_agg(json_build_object('stepIndex', s.step_index, 'status', s.status, 'code', s.code)
                           ORDER BY s.step_index) FILTER (WHERE s.status <> 'pass'), '[]') AS unpassed
    FROM recent r
   CROSS JOIN LATERAL (
         SELECT s.run_id, s.case_index, s.attempt, s.test_case_id, s.status, s.step_index,
                CASE WHEN s.status <> 'pass' THEN s.error ->> 'code' END AS code
           FROM otp_run_steps s
          WHERE s.run_id = r.id AND (:testCaseId::text IS NULL OR s.test_case_id = :testCaseId::text)) s
   GROUP BY s.run_id, s.case_index, s.attempt)
SELECT r.id AS "runId", r.created_at AS "createdAt", g.test_case_id AS "testCaseId",
       (r.test_cases -> g.case_index ->> 'version')::int AS version, g.case_index AS "caseIndex", g.attempt,
       g.passed, g.unpassed, g.first_index AS "firstIndex"
  FROM groups g JOIN recent r ON r.id = g.run_id`;

// A step with candidates that passed through another than its first, or whose tried list (the
// executor's report, on a passed step or in its error) says what each candidate matched.
const LOCATOR_STEPS_SQL = `
WITH ${RECENT}
SELECT r.id AS "runId", r.created_at AS "createdAt", s.test_case_id AS "testCaseId",
       (r.test_cases -> s.case_index ->> 'version')::int AS version,
       s.step_index - (SELECT min(f.step_index) FROM otp_run_steps f WHERE f.run_id = s.run_id AND f.case_index = s.case_index) AS position,
       s.label, s.status, s.action -> 'locator' AS locator, s.used_locator AS "usedLocator",
       coalesce(s.tried_locators, s.error -> 'triedLocators') AS "triedLocators",
       s.evidence ->> 'screenshotAssetId' AS "screenshotAssetId"
  FROM recent r
 CROSS JOIN LATERAL (
       SELECT * FROM otp_run_steps s
        WHERE s.run_id = r.id AND s.status IN ('pass', 'fail', 'error') AND jsonb_exists(s.action -> 'locator', 'candidates')
          AND (:testCaseId::text IS NULL OR s.test_case_id = :testCaseId::text)
          AND ((s.status = 'pass' AND s.used_locator IS NOT NULL AND s.used_locator <> s.action -> 'locator' -> 'candidates' -> 0)
               OR s.tried_locators IS NOT NULL OR jsonb_exists(s.error, 'triedLocators'))) s`;

export interface HistoryWindow {
  /** The project's latest finished runs to look at. */
  runs: number;
  /** Only the runs of this test case. */
  testCaseId?: string;
}

export class RunHistoryStore {
  constructor(private readonly db: Db) {}

  async caseAttempts(projectId: string, window: HistoryWindow): Promise<CaseAttemptRow[]> {
    const result = await this.db.raw(CASE_ATTEMPTS_SQL, {
      projectId,
      runs: window.runs,
      testCaseId: window.testCaseId ?? null,
    });
    return result.rows.map((row: CaseAttemptRow & { createdAt: Date }) => ({
      ...row,
      createdAt: new Date(row.createdAt).toISOString(),
    }));
  }

  async locatorSteps(projectId: string, window: HistoryWindow): Promise<LocatorStepRow[]> {
    const result = await this.db.raw(LOCATOR_STEPS_SQL, {
      projectId,
      runs: window.runs,
      testCaseId: window.testCaseId ?? null,
    });
    return result.rows.map((row: LocatorStepRow & { createdAt: Date }) => ({
      ...row,
      createdAt: new Date(row.createdAt).toISOString(),
    }));
  }
}
