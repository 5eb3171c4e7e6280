// Test results of OTP runs: when a run started with a testRunId has its verdict,
// one result per test case of the run goes into that test run, and finishTestRun closes it.
// Recording is idempotent (a unique index on otpRunId + testCaseId) and marked on the run, so the
// sweep can safely retry runs whose hook never ran (a process that died, a run finished as orphaned).
// The runs themselves belong to the OTP room: this module reads and marks them only through the
// RunResultsSource port below, which the OTP store implements (and whose run and step shapes it defines).

import { OtpErrorCode } from '../../../machines/types.js';
import { type ChangeEvent, type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import type { RunOwingResults, RunStepOutcome } from '../../otp/store/run-results-store.js';
import type { ArtifactDefinition, StoredArtifact } from '../kind.js';
import { artifactRecord } from '../store.js';

/** flaky: passed on a retry, after an attempt that failed (POST /otp/runs retries). */
export const RESULT_STATUSES = ['passed', 'failed', 'skipped', 'blocked', 'error', 'cancelled', 'flaky'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

/**
 * What recording needs of OTP runs. Declared here, implemented by the OTP store
 * (src/otp/store/run-results-store.ts) and wired in src/service.ts, so this room never reads or
 * writes the OTP tables itself.
 */
export interface RunResultsSource {
  /** The run with its step outcomes, or null when it owes no results (none asked, not finished, already recorded). */
  runOwingResults(runId: string): Promise<RunOwingResults | null>;
  /** Ids of runs finished more than `olderThanMs` ago that still owe results, oldest first. */
  runsOwingResults(olderThanMs: number, limit: number): Promise<string[]>;
  /** Marks the run's results recorded; inside `trx` when given, so it commits with the results. */
  markResultsRecorded(runId: string, trx?: Db): Promise<void>;
}

// Most telling first: a case that failed anywhere failed, whatever else happened to it.
const PRECEDENCE: ResultStatus[] = ['failed', 'error', 'cancelled', 'passed', 'skipped'];

/**
 * The outcome of one test case from its steps:
 * - failed: a step failed, or errored on the executor's side or by time-out (as the run counts it);
 * - error: a step was cut short by the service or a lost executor (E_INTERNAL), or never decided;
 * - cancelled: steps were cancelled with the run (E_CANCELLED) and none of the above happened;
 * - passed: at least one step passed and the others passed or were skipped (capability skips);
 * - skipped: every step was skipped, or the case has no steps;
 * - flaky: passed on a retry (its steps are of an attempt after the first).
 */
export function caseOutcome(
  steps: ReadonlyArray<Pick<RunStepOutcome, 'status' | 'source' | 'error'> & { attempt?: number }>,
): ResultStatus {
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
  const outcome = PRECEDENCE.find((s) => seen.has(s)) ?? 'skipped';
  // The steps are the case's last attempt: one that passes after a retry is flaky.
  return outcome === 'passed' && steps.some((s) => (s.attempt ?? 1) > 1) ? 'flaky' : outcome;
}

/** The artifact definitions whose records the recorder writes (their records go into its events). */
export interface RecordedKinds {
  testResult: ArtifactDefinition;
  testRun: ArtifactDefinition;
}

export class RunResultRecorder {
  constructor(
    private readonly db: Db,
    private readonly runs: RunResultsSource,
    private readonly log: Logger,
    private readonly kinds?: RecordedKinds,
    /** Results recorded (`test_result.created` and `.recorded`) and the test run closed, in the recording transaction. */
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  /** The events of rows the recording transaction wrote (none when the kinds are not known). */
  private async report(trx: Db, results: StoredArtifact[], closed: StoredArtifact[]): Promise<void> {
    const { kinds } = this;
    if (!kinds) return;
    const events: ChangeEvent[] = [];
    const add = (types: string[], row: StoredArtifact, data: Record<string, unknown>) => {
      for (const type of types) events.push({ type, tenantId: row.tenant_id, projectId: row.project_id, data });
    };
    for (const row of results)
      add(['test_result.created', EventType.testResultRecorded], row, artifactRecord(kinds.testResult, row));
    for (const row of closed) {
      const record = artifactRecord(kinds.testRun, row);
      await kinds.testRun.hooks?.decorate?.(trx, row.project_id, [record]);
      add(['test_run.updated', EventType.testRunClosed], row, record);
    }
    await this.events.record(trx, events);
  }

  /** Records the results of one finished run (no-op for runs without a test run, or already recorded). */
  async record(runId: string): Promise<void> {
    const { db, runs } = this;
    const run = await runs.runOwingResults(runId);
    if (!run) return;
    const testRun = await db('artifacts')
      .where({ id: run.testRunId, project_id: run.projectId, kind: 'test_run' })
      .first('id');
    if (!testRun) {
      this.log.info('test run of an OTP run is gone; no results recorded', { runId, testRunId: run.testRunId });
      await runs.markResultsRecorded(runId);
      return;
    }
    // One result per test case: a case listed twice in the run is judged on all its steps together.
    const byCase = new Map<string, RunStepOutcome[]>();
    for (const c of run.testCases) byCase.set(c.id, byCase.get(c.id) ?? []);
    for (const step of run.steps) byCase.get(step.testCaseId)?.push(step);

    const executedAt = run.finishedAt?.toISOString() ?? new Date().toISOString();
    // The results, the closing of the test run and the mark on the OTP run commit together (the
    // store writes its mark inside this transaction): after a failure none of them stands and the
    // sweep records the run again from the start; a hook and a sweep racing on one run insert each
    // result once (the unique index) and mark it twice, harmlessly.
    await db.transaction(async (trx) => {
      const inserted: StoredArtifact[] = [];
      for (const [testCaseId, caseSteps] of byCase) {
        const status = caseOutcome(caseSteps);
        const evidence = caseSteps.map((s) => s.evidence?.screenshotAssetId).filter((id): id is string => Boolean(id));
        const data = {
          testRunId: run.testRunId,
          testCaseId,
          status,
          otpRunId: runId,
          durationMs: caseSteps.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
          executedAt,
          executedBy: run.sessionId ? `otp:${run.sessionId}` : 'otp',
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
        // RETURNING answers only a row this transaction wrote: a racing hook and sweep report a result once.
        const { rows } = await trx.raw(
          `INSERT INTO artifacts (id, kind, tenant_id, project_id, data)
           VALUES (?, 'test_result', ?, ?, ?::jsonb)
           ON CONFLICT ((data->>'otpRunId'), (data->>'testCaseId')) WHERE kind = 'test_result' DO NOTHING
           RETURNING *`,
          [newId('res'), run.tenantId, run.projectId, JSON.stringify(data)],
        );
        inserted.push(...rows);
      }
      let closed: StoredArtifact[] = [];
      if (run.finishTestRun) {
        closed = await trx('artifacts')
          .where({ id: run.testRunId, kind: 'test_run' })
          .whereRaw(`data->>'status' <> 'closed'`)
          .update({
            data: trx.raw(`data || jsonb_build_object('status', 'closed', 'closedAt', ?::text)`, [
              new Date().toISOString(),
            ]),
            version: trx.raw('version + 1'),
            updated_at: trx.fn.now(),
          })
          .returning('*');
      }
      await this.report(trx, inserted, closed);
      await runs.markResultsRecorded(runId, trx);
    });
  }

  /** Runs that finished without their results (hook missed or failed): recorded now. */
  async sweep(olderThanMs = 2_000): Promise<void> {
    const owed = await this.runs.runsOwingResults(olderThanMs, 100);
    for (const id of owed) {
      await this.record(id).catch((err) => this.log.error('could not record test results', { runId: id, err }));
    }
  }
}
