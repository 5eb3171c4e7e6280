// Test results of OTP runs: when a run started with a testRunId has its verdict,
// one result per test case of the run goes into that test run, and finishTestRun closes it.
// Recording is idempotent (a unique index on otpRunId + testCaseId) and marked on the run, so the
// sweep can safely retry runs whose hook never ran (a process that died, a run finished as orphaned).
// The runs themselves belong to the OTP room: this module reads and marks them only through the
// RunResultsSource port below, which the OTP store implements (and whose run and step shapes it defines).

import { type CaseOutcome, judgeCase, tallyOf } from '../../../machines/case-outcome.js';
import { isFailure } from '../../../machines/counts.js';
import { stepName, stepPlace } from '../../../machines/step-names.js';
import { type ChangeEvent, type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import type { RunOwingResults, RunStepOutcome } from '../../otp/store/run-results-store.js';
import type { ArtifactDefinition, StoredArtifact } from '../kind.js';
import { artifactRecord } from '../store.js';

/**
 * A result's status: a case outcome (machines/case-outcome.ts; flaky: passed on a retry), or blocked,
 * which a person enters for a case that could not be run.
 */
export const RESULT_STATUSES = ['passed', 'failed', 'skipped', 'blocked', 'error', 'cancelled', 'flaky'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];
// Every outcome of a finished case is a result status (pending is recorded as error).
type EveryOutcomeIsAStatus = Exclude<CaseOutcome, 'pending'> extends ResultStatus ? true : never;
const everyOutcomeIsAStatus: EveryOutcomeIsAStatus = true;
void everyOutcomeIsAStatus;

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

/** A failing step as a result records it: which, in which attempt, and what it said. */
export interface ResultFailure {
  attempt: number;
  stepIndex: number;
  /** The step as people read it (machines/step-names.ts). */
  step: string;
  code: string;
  message: string;
}

type CaseStep = RunStepOutcome & { code: string | null };

function judged(steps: readonly RunStepOutcome[], attempt: number) {
  return judgeCase(tallyOf(steps.map((s) => ({ ...s, code: s.error?.code ?? null })) as CaseStep[], attempt));
}

function failureOf(step: CaseStep | null, attempt: number, place: (stepIndex: number) => string): ResultFailure[] {
  if (!step) return [];
  const name = place(step.stepIndex);
  return [
    {
      attempt,
      stepIndex: step.stepIndex,
      step: name,
      code: step.code ?? step.status,
      message: step.error?.message ?? `${name} ${step.status}`,
    },
  ];
}

/**
 * One test case's result from its steps, by the one rule (machines/case-outcome.ts): its last
 * attempt's outcome (pending, which a finished run cannot leave, as error), the step that decided it,
 * and the earlier attempts that failed (retries).
 */
export function caseResult(
  steps: readonly RunStepOutcome[],
  earlier: readonly RunStepOutcome[],
  place: (stepIndex: number) => string,
): { status: ResultStatus; failure?: ResultFailure; failedAttempts: ResultFailure[] } {
  const attempt = Math.max(1, ...steps.map((s) => s.attempt ?? 1));
  const { outcome, failingStep } = judged(steps, attempt);
  const failedAttempts = [...new Set(earlier.map((s) => s.attempt ?? 1))]
    .sort((a, b) => a - b)
    .flatMap((n) =>
      failureOf(
        judged(
          earlier.filter((s) => (s.attempt ?? 1) === n),
          n,
        ).failingStep,
        n,
        place,
      ),
    );
  const [failure] = failureOf(failingStep, attempt, place);
  return { status: outcome === 'pending' ? 'error' : outcome, ...(failure ? { failure } : {}), failedAttempts };
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
    const byCase = new Map<string, { steps: RunStepOutcome[]; earlier: RunStepOutcome[] }>();
    for (const c of run.testCases) byCase.set(c.id, byCase.get(c.id) ?? { steps: [], earlier: [] });
    for (const step of run.steps) byCase.get(step.testCaseId)?.steps.push(step);
    for (const step of run.earlierAttempts) byCase.get(step.testCaseId)?.earlier.push(step);
    const place = (stepIndex: number) => stepName(stepPlace(run.steps, stepIndex));

    const executedAt = run.finishedAt?.toISOString() ?? new Date().toISOString();
    // The results, the closing of the test run and the mark on the OTP run commit together (the
    // store writes its mark inside this transaction): after a failure none of them stands and the
    // sweep records the run again from the start; a hook and a sweep racing on one run insert each
    // result once (the unique index) and mark it twice, harmlessly.
    await db.transaction(async (trx) => {
      const inserted: StoredArtifact[] = [];
      for (const [testCaseId, { steps: caseSteps, earlier }] of byCase) {
        const { status, failure, failedAttempts } = caseResult(caseSteps, earlier, place);
        const evidence = caseSteps.map((s) => s.evidence?.screenshotAssetId).filter((id): id is string => Boolean(id));
        const data = {
          testRunId: run.testRunId,
          testCaseId,
          status,
          ...(failure ? { failure } : {}),
          ...(failedAttempts.length ? { failedAttempts } : {}),
          otpRunId: runId,
          durationMs: caseSteps.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
          executedAt,
          executedBy: run.sessionId ? `otp:${run.sessionId}` : 'otp',
          ...(status === 'cancelled' || status === 'error'
            ? { comment: run.reason ?? failure?.message ?? `run ${run.status}` }
            : {}),
          evidenceAssetIds: evidence,
          stepCounts: {
            passed: caseSteps.filter((s) => s.status === 'pass').length,
            failed: caseSteps.filter((s) => isFailure(s.status)).length,
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
