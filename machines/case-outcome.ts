// A test case's outcome in a run: the one rule every door applies (GET /otp/runs/{id}, the run's JUnit
// and CTRF, the test results a run records and the test run's reports, readiness, the ai room's
// history, failures and flakiness, `otp run`, the run machine's flaky count). docs/decisions.md, "A
// test case's outcome". Pure: callers hand it the case's steps, or the tally SQL aggregates of them.
import { OtpErrorCode, type StepStatus } from './types.js';

/**
 * The one vocabulary. A run's test results take theirs from it (pending aside: a case is pending only
 * while its run is in progress).
 */
export const CASE_OUTCOMES = ['passed', 'flaky', 'failed', 'error', 'cancelled', 'skipped', 'pending'] as const;
export type CaseOutcome = (typeof CASE_OUTCOMES)[number];

/** One step of a case's attempt, as far as the case's outcome is concerned. */
export interface OutcomeStep {
  stepIndex: number;
  status: StepStatus | 'pending';
  /** Its error's code, when it has one. */
  code?: string | null;
}

/**
 * One attempt of a test case as the rule reads it: a count and the steps that did not pass, in step
 * order, which SQL aggregates as easily as `tallyOf` makes them of steps in memory.
 */
export interface CaseTally<S extends OutcomeStep = OutcomeStep> {
  /** Which attempt of the case (1 first; more after a retry). */
  attempt: number;
  /** How many of its steps passed. */
  passed: number;
  /** Its other steps (fail, error, skip, pending), in step order. */
  unpassed: readonly S[];
}

export interface CaseJudgement<S extends OutcomeStep = OutcomeStep> {
  outcome: CaseOutcome;
  /** The step that decided a failed, error or cancelled case; null for the others. */
  failingStep: S | null;
}

/** Skips the service records for steps it could not send: a lost executor or process, an outage. */
const NOT_RUN: ReadonlySet<string> = new Set([OtpErrorCode.internal, OtpErrorCode.databaseUnavailable]);

/** What a step that did not pass makes of its case; null for a skip that leaves it to the others. */
function decides(step: OutcomeStep): 'failed' | 'error' | 'cancelled' | null {
  if (step.status === 'fail') return 'failed';
  if (step.code === OtpErrorCode.cancelled) return 'cancelled';
  if (step.status === 'error') return 'error';
  // A skip: for a capability, after an earlier failure (E_SKIPPED), or by the executor; or the service's.
  return NOT_RUN.has(step.code ?? '') ? 'error' : null;
}

/**
 * The outcome of one attempt of a test case. While a step has no outcome the case is `pending`.
 * Otherwise the first step that did not pass decides, skips for a capability (and the E_SKIPPED rest
 * of a failed case) aside: `failed` when its check did not hold (fail); `error` when it could not be
 * performed (error: a time-out, the executor's E_TIMEOUT or E_INTERNAL, a lost executor) or the
 * service could not run it (a skip with E_INTERNAL or E_DATABASE_UNAVAILABLE: the executor or a
 * process was lost, an outage outlasted its window, before the step was sent); `cancelled` when the
 * run was cancelled under it or before it. With none, the case is `skipped` when no step passed,
 * else `passed`, or `flaky` on a later attempt (a case runs again only after a failed attempt).
 */
export function judgeCase<S extends OutcomeStep>(tally: CaseTally<S>): CaseJudgement<S> {
  if (tally.unpassed.some((s) => s.status === 'pending')) return { outcome: 'pending', failingStep: null };
  for (const step of tally.unpassed) {
    const outcome = decides(step);
    if (outcome) return { outcome, failingStep: step };
  }
  if (tally.passed === 0) return { outcome: 'skipped', failingStep: null };
  return { outcome: tally.attempt > 1 ? 'flaky' : 'passed', failingStep: null };
}

/** The tally of one attempt's steps, in memory (in step order, or any order: they are sorted). */
export function tallyOf<S extends OutcomeStep>(steps: readonly S[], attempt = 1): CaseTally<S> {
  const unpassed = steps.filter((s) => s.status !== 'pass').sort((a, b) => a.stepIndex - b.stepIndex);
  return { attempt, passed: steps.length - unpassed.length, unpassed };
}

/** A step with its error, as stored and as REST answers it, as an OutcomeStep. */
export function outcomeStep<S extends { stepIndex: number; status: StepStatus | 'pending'; error?: unknown }>(
  step: S,
): S & OutcomeStep {
  return { ...step, code: (step.error as { code?: string } | null | undefined)?.code ?? null };
}

/** The outcomes that pass a test case (flaky: on a retry). */
export function isPassingOutcome(outcome: string): boolean {
  return outcome === 'passed' || outcome === 'flaky';
}

/** The outcomes that fail a test case; cancelled, skipped and pending judge nothing. */
export function isFailingOutcome(outcome: string): boolean {
  return outcome === 'failed' || outcome === 'error';
}
