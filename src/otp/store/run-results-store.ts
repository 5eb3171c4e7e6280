// What the artifacts room needs of OTP runs to record their test results (its RunResultsSource port,
// src/artifacts/tests/run-results.ts, wired in src/service.ts): a finished run that still owes its
// results, with every step's outcome; the runs that owe them; and the mark that they are recorded.

import { FINAL_RUN_STATUSES, type FinalRunStatus, type StepStatus } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import type { RunCaseRef } from './run-store.js';

/** One step of a finished run, as far as its test case's result is concerned. */
export interface RunStepOutcome {
  stepIndex: number;
  caseIndex: number;
  testCaseId: string;
  status: 'pending' | StepStatus;
  source: 'executor' | 'service' | null;
  error: { code?: string; message?: string } | null;
  durationMs: number | null;
  evidence: { screenshotAssetId?: string } | null;
  /** The attempt of its test case (1; more after a retry). */
  attempt?: number;
}

/** A finished run whose test results are not recorded yet. */
export interface RunOwingResults {
  id: string;
  tenantId: string;
  projectId: string;
  status: FinalRunStatus;
  reason: string | null;
  /** The session that ran it (null when it never started). */
  sessionId: string | null;
  testRunId: string;
  finishTestRun: boolean;
  testCases: RunCaseRef[];
  finishedAt: Date | null;
  /** In step order: each case's last attempt. */
  steps: RunStepOutcome[];
  /** The attempts before the last of the cases that ran again (retries), by attempt and step. */
  earlierAttempts: RunStepOutcome[];
}

// A run owes results when it was started with a testRunId, has its verdict, and no recording has
// been marked; the partial index otp_runs_results_owed covers the sweep's scan.
const OWING = `r.test_run_id IS NOT NULL AND r.results_recorded_at IS NULL AND r.status = ANY(?)`;

export class RunResultsStore {
  constructor(private readonly db: Db) {}

  /**
   * The run with its step outcomes in one statement, or null when it owes no results (no test run,
   * not finished, already recorded). Asked after every run's verdict, so a run without a test run
   * (most of them) costs one probe by primary key and reads no steps.
   */
  async runOwingResults(runId: string): Promise<RunOwingResults | null> {
    const { rows } = await this.db.raw(
      `SELECT r.id, r.tenant_id, r.project_id, r.status, r.reason, r.session_id, r.test_run_id, r.finish_test_run,
              r.test_cases, r.finished_at,
              coalesce((SELECT json_agg(json_build_object('stepIndex', s.step_index, 'caseIndex', s.case_index, 'testCaseId', s.test_case_id,
                                                          'status', s.status, 'source', s.source, 'error', s.error,
                                                          'durationMs', s.duration_ms, 'evidence', s.evidence, 'attempt', s.attempt)
                                        ORDER BY s.step_index)
                          FROM otp_run_steps s WHERE s.run_id = r.id), '[]') AS steps,
              coalesce((SELECT json_agg(json_build_object('stepIndex', a.step_index, 'caseIndex', s.case_index, 'testCaseId', s.test_case_id,
                                                          'status', a.status, 'source', a.source, 'error', a.error,
                                                          'durationMs', a.duration_ms, 'evidence', a.evidence, 'attempt', a.attempt)
                                        ORDER BY a.attempt, a.step_index)
                          FROM otp_run_step_attempts a JOIN otp_run_steps s ON s.run_id = a.run_id AND s.step_index = a.step_index
                         WHERE a.run_id = r.id), '[]') AS earlier_attempts
         FROM otp_runs r
        WHERE r.id = ? AND ${OWING}`,
      [runId, [...FINAL_RUN_STATUSES]],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      tenantId: row.tenant_id,
      projectId: row.project_id,
      status: row.status,
      reason: row.reason,
      sessionId: row.session_id,
      testRunId: row.test_run_id,
      finishTestRun: row.finish_test_run,
      testCases: row.test_cases,
      finishedAt: row.finished_at,
      steps: row.steps,
      earlierAttempts: row.earlier_attempts,
    };
  }

  /** Runs that finished more than `olderThanMs` ago and still owe their results, oldest first. */
  runsOwingResults(olderThanMs: number, limit: number): Promise<string[]> {
    return this.db('otp_runs as r')
      .whereRaw(OWING, [[...FINAL_RUN_STATUSES]])
      .where('r.finished_at', '<', this.db.raw('now() - make_interval(secs => ?)', [olderThanMs / 1000]))
      .orderBy('r.finished_at')
      .limit(limit)
      .pluck('r.id');
  }

  /**
   * Marks the run's results recorded. Inside `trx` when given: the recorder passes the transaction
   * that writes the results, so the results and the mark commit together (or neither does).
   */
  async markResultsRecorded(runId: string, trx?: Db): Promise<void> {
    const db = trx ?? this.db;
    await db('otp_runs').where('id', runId).update({ results_recorded_at: db.fn.now() });
  }
}
