// Test results of OTP runs (record_test_result): when a run started with a testRunId has its verdict,
// one result per test case of the run goes into that test run, and finishTestRun closes it.
// Recording is idempotent (a unique index on otpRunId + testCaseId) and marked on the run, so the
// sweep can safely retry runs whose hook never ran (a process that died, a run finished as orphaned).
import type { Db } from '../../db/connect.js';
import type { Logger } from '../../log.js';
import { newId } from '../../ids.js';
import { FINAL_RUN_STATUSES, isFinalRunStatus, OtpErrorCode } from '../../../machines/types.js';

export const RESULT_STATUSES = ['passed', 'failed', 'skipped', 'blocked', 'error', 'cancelled'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

export interface StepOutcomeRow {
  case_index: number;
  test_case_id: string;
  status: 'pending' | 'pass' | 'fail' | 'skip' | 'error';
  source: 'executor' | 'service' | null;
  error: { code?: string } | null;
  duration_ms: number | null;
  evidence: { screenshotAssetId?: string } | null;
}

// Most telling first: a case that failed anywhere failed, whatever else happened to it.
const PRECEDENCE: ResultStatus[] = ['failed', 'error', 'cancelled', 'passed', 'skipped'];

/**
 * The outcome of one test case from its steps:
 * - failed: a step failed, or errored on the executor's side or by time-out (as the run counts it);
 * - error: a step was cut short by the service or a lost executor (E_INTERNAL), or never decided;
 * - cancelled: steps were cancelled with the run (E_CANCELLED) and none of the above happened;
 * - passed: at least one step passed and the others passed or were skipped (capability skips);
 * - skipped: every step was skipped, or the case has no steps.
 */
export function caseOutcome(steps: ReadonlyArray<Pick<StepOutcomeRow, 'status' | 'source' | 'error'>>): ResultStatus {
  const seen = new Set<ResultStatus>();
  for (const step of steps) {
    const code = step.error?.code;
    if (step.status === 'fail') seen.add('failed');
    else if (step.status === 'error') {
      if (code === OtpErrorCode.cancelled) seen.add('cancelled');
      else if (step.source === 'executor' || code === OtpErrorCode.timeout) seen.add('failed');
      else seen.add('error');
    } else if (step.status === 'skip') {
      if (code === OtpErrorCode.cancelled) seen.add('cancelled');
      else if (code === OtpErrorCode.internal) seen.add('error');
    } else if (step.status === 'pass') seen.add('passed');
    else seen.add('error'); // pending: the run ended without deciding it
  }
  return PRECEDENCE.find((s) => seen.has(s)) ?? 'skipped';
}

export class RunResultRecorder {
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Records the results of one finished run (no-op for runs without a test run, or already recorded). */
  async record(runId: string): Promise<void> {
    const { db } = this;
    const run = await db('otp_runs').where('id', runId).first();
    if (!run || !run.test_run_id || run.results_recorded_at || !isFinalRunStatus(run.status)) return;
    const testRun = await db('artifacts').where({ id: run.test_run_id, project_id: run.project_id, kind: 'test_run' }).first('id');
    if (!testRun) {
      this.log.info('test run of an OTP run is gone; no results recorded', { runId, testRunId: run.test_run_id });
      await db('otp_runs').where('id', runId).update({ results_recorded_at: db.fn.now() });
      return;
    }
    const steps: StepOutcomeRow[] = await db('otp_run_steps')
      .where('run_id', runId)
      .orderBy('step_index')
      .select('case_index', 'test_case_id', 'status', 'source', 'error', 'duration_ms', 'evidence');
    const cases: Array<{ id: string }> = run.test_cases;
    // One result per test case: a case listed twice in the run is judged on all its steps together.
    const byCase = new Map<string, StepOutcomeRow[]>();
    for (const c of cases) byCase.set(c.id, byCase.get(c.id) ?? []);
    for (const step of steps) byCase.get(step.test_case_id)?.push(step);

    const executedAt = (run.finished_at as Date | null)?.toISOString() ?? new Date().toISOString();
    await db.transaction(async (trx) => {
      for (const [testCaseId, caseSteps] of byCase) {
        const status = caseOutcome(caseSteps);
        const evidence = caseSteps.map((s) => s.evidence?.screenshotAssetId).filter((id): id is string => Boolean(id));
        const data = {
          testRunId: run.test_run_id,
          testCaseId,
          status,
          otpRunId: runId,
          durationMs: caseSteps.reduce((sum, s) => sum + (s.duration_ms ?? 0), 0),
          executedAt,
          executedBy: run.session_id ? `otp:${run.session_id}` : 'otp',
          ...(status === 'cancelled' || status === 'error' ? { comment: run.reason ?? `run ${run.status}` } : {}),
          evidenceAssetIds: evidence,
          stepCounts: {
            passed: caseSteps.filter((s) => s.status === 'pass').length,
            failed: caseSteps.filter((s) => s.status === 'fail' || s.status === 'error').length,
            skipped: caseSteps.filter((s) => s.status === 'skip').length,
            total: caseSteps.length,
          },
          labels: [],
        };
        await trx.raw(
          `INSERT INTO artifacts (id, kind, tenant_id, project_id, data)
           VALUES (?, 'test_result', ?, ?, ?::jsonb)
           ON CONFLICT ((data->>'otpRunId'), (data->>'testCaseId')) WHERE kind = 'test_result' DO NOTHING`,
          [newId('res'), run.tenant_id, run.project_id, JSON.stringify(data)],
        );
      }
      if (run.finish_test_run) {
        await trx('artifacts')
          .where({ id: run.test_run_id, kind: 'test_run' })
          .whereRaw(`data->>'status' <> 'closed'`)
          .update({
            data: trx.raw(`data || jsonb_build_object('status', 'closed', 'closedAt', ?::text)`, [new Date().toISOString()]),
            version: trx.raw('version + 1'),
            updated_at: trx.fn.now(),
          });
      }
      await trx('otp_runs').where('id', runId).update({ results_recorded_at: trx.fn.now() });
    });
  }

  /** Runs that finished without their results (hook missed or failed): recorded now. */
  async sweep(olderThanMs = 2_000): Promise<void> {
    const owed: string[] = await this.db('otp_runs')
      .whereNotNull('test_run_id')
      .whereNull('results_recorded_at')
      .whereIn('status', FINAL_RUN_STATUSES)
      .where('finished_at', '<', this.db.raw('now() - make_interval(secs => ?)', [olderThanMs / 1000]))
      .orderBy('finished_at')
      .limit(100)
      .pluck('id');
    for (const id of owed) {
      await this.record(id).catch((err) => this.log.error('could not record test results', { runId: id, err }));
    }
  }
}
