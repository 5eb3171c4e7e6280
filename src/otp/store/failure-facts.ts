// What the ai room needs of finished runs to sign their failures (its RunFailureSource port,
// src/ai/facts.ts, wired in src/service.ts): the runs finished after a point, and for a batch of
// runs their test cases' outcomes and their failed steps. Read after the verdict, never on the step path.

import type { CaseTally } from '../../../machines/case-outcome.js';
import { FINAL_RUN_STATUSES, type FinalRunStatus } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';

export interface FinishedRunRef {
  id: string;
  finishedAt: Date;
}

/** A test case of a finished run: its last attempt's tally, which the ai room judges (machines/case-outcome.ts). */
export interface CaseOutcomeFact {
  caseIndex: number;
  testCaseId: string;
  /** Index of the case's first step in the run. */
  firstStep: number;
  tally: CaseTally;
}

export interface FailedStepFact {
  stepIndex: number;
  caseIndex: number;
  testCaseId: string;
  status: 'fail' | 'error';
  source: 'executor' | 'service' | null;
  action: unknown;
  error: { code?: string; message?: string } | null;
  screenshotAssetId: string | null;
  /** The case's last main-document navigation up to this step (step evidence.navigations), if any. */
  lastNavigation: { url: string; status?: number; statusText?: string; error?: string } | null;
}

export interface FinishedRunFacts {
  id: string;
  tenantId: string;
  projectId: string;
  planId: string | null;
  status: FinalRunStatus;
  finishedAt: Date;
  cases: CaseOutcomeFact[];
  failures: FailedStepFact[];
}

export class RunFailureFacts {
  constructor(private readonly db: Db) {}

  /** Runs finished after `after` (in (finished_at, id) order) and before `before`, oldest first. */
  async finishedRuns(after: FinishedRunRef | null, before: Date, limit: number): Promise<FinishedRunRef[]> {
    const { rows } = await this.db.raw(
      `SELECT id, finished_at FROM otp_runs
        WHERE finished_at IS NOT NULL AND finished_at < ? ${after ? 'AND (finished_at, id) > (?, ?)' : ''}
        ORDER BY finished_at, id LIMIT ?`,
      after ? [before, after.finishedAt, after.id, limit] : [before, limit],
    );
    return (rows as Array<{ id: string; finished_at: Date }>).map((r) => ({ id: r.id, finishedAt: r.finished_at }));
  }

  /** The finished runs among `runIds`, each with its cases' outcomes and its failed steps. */
  async runs(runIds: readonly string[]): Promise<FinishedRunFacts[]> {
    if (runIds.length === 0) return [];
    const ids = [...runIds];
    const [runs, cases, failures] = await Promise.all([
      this.db.raw(
        `SELECT id, tenant_id, project_id, plan_id, status, finished_at FROM otp_runs
          WHERE id = ANY(?) AND status = ANY(?) AND finished_at IS NOT NULL`,
        [ids, [...FINAL_RUN_STATUSES]],
      ),
      // Each case's tally (CaseTally): only counted and listed here, judged by the ai room.
      this.db.raw(
        `SELECT run_id, case_index, min(test_case_id) AS test_case_id, min(step_index) AS first_step,
                max(attempt) AS attempt, count(*) FILTER (WHERE status = 'pass')::int AS passed,
                coalesce(json_agg(json_build_object('stepIndex', step_index, 'status', status, 'code', error->>'code')
                                  ORDER BY step_index) FILTER (WHERE status <> 'pass'), '[]') AS unpassed
           FROM otp_run_steps WHERE run_id = ANY(?) GROUP BY run_id, case_index`,
        [ids],
      ),
      this.db.raw(
        `SELECT s.run_id, s.step_index, s.case_index, s.test_case_id, s.status, s.source, s.action, s.error,
                s.evidence->>'screenshotAssetId' AS screenshot,
                (SELECT n.nav FROM otp_run_steps p
                   CROSS JOIN LATERAL jsonb_array_elements(p.evidence->'navigations') WITH ORDINALITY AS n(nav, i)
                  WHERE p.run_id = s.run_id AND p.case_index = s.case_index AND p.step_index <= s.step_index
                    AND jsonb_typeof(p.evidence->'navigations') = 'array'
                  ORDER BY p.step_index DESC, n.i DESC LIMIT 1) AS last_navigation
           FROM otp_run_steps s WHERE s.run_id = ANY(?) AND s.status IN ('fail', 'error') ORDER BY s.run_id, s.step_index`,
        [ids],
      ),
    ]);
    const byRun = new Map<string, FinishedRunFacts>();
    for (const r of runs.rows) {
      byRun.set(r.id, {
        id: r.id,
        tenantId: r.tenant_id,
        projectId: r.project_id,
        planId: r.plan_id,
        status: r.status,
        finishedAt: r.finished_at,
        cases: [],
        failures: [],
      });
    }
    for (const c of cases.rows) {
      byRun.get(c.run_id)?.cases.push({
        caseIndex: c.case_index,
        testCaseId: c.test_case_id,
        firstStep: c.first_step,
        tally: { attempt: c.attempt ?? 1, passed: c.passed, unpassed: c.unpassed },
      });
    }
    for (const f of failures.rows) {
      byRun.get(f.run_id)?.failures.push({
        stepIndex: f.step_index,
        caseIndex: f.case_index,
        testCaseId: f.test_case_id,
        status: f.status,
        source: f.source,
        action: f.action,
        error: f.error,
        screenshotAssetId: f.screenshot,
        lastNavigation: f.last_navigation ?? null,
      });
    }
    for (const run of byRun.values()) run.cases.sort((a, b) => a.caseIndex - b.caseIndex);
    return [...byRun.values()];
  }
}
