// Retries of a failed test case (POST /otp/runs retries): when a case's attempt ends failed and it has
// attempts left, the batch that ends it carries a retry, and once that is durable the case starts over
// from its first step (rewindCase). Pure functions of the run's context, as run.steps.ts.
import { judgeCase, tallyOf } from './case-outcome.js';
import { isFailure, subtractOutcomes } from './counts.js';
import { nextToSend, type RunContext } from './run.context.js';
import type { PlannedStep, RunInput, StepOutcome } from './types.js';

export function retriesOf(input: RunInput, caseIndex: number): number {
  return input.retries?.[caseIndex] ?? 0;
}

export function attemptOf(context: RunContext, caseIndex: number): number {
  return context.attempts[caseIndex] ?? 1;
}

/** A case whose attempt ends `failed` runs again when it has attempts left and no stop was asked. */
export function retriesAfter(context: RunContext, caseIndex: number, failed: boolean): boolean {
  return failed && context.stop === null && attemptOf(context, caseIndex) <= retriesOf(context.input, caseIndex);
}

/**
 * After `decided` (the step at the cursor and the E_SKIPPED rest of its case): the bookkeeping of a
 * case with retries. When its attempt is over, it is retried (the retry goes with the batch) or
 * done (flaky when it passed after a retry).
 */
export function afterDecided(
  context: RunContext,
  step: PlannedStep,
  decided: StepOutcome[],
  abortedCases: number[],
): Partial<RunContext> {
  const { input } = context;
  const caseIndex = step.caseIndex;
  const caseOutcomes = [...context.caseOutcomes, ...decided];
  const failed = context.caseFailed || isFailure(decided[0]!.status);
  const next = nextToSend(input, abortedCases, context.cursor + 1);
  if (next < input.steps.length && input.steps[next]!.caseIndex === caseIndex)
    return { caseOutcomes, caseFailed: failed };
  if (retriesAfter(context, caseIndex, failed)) {
    const stepIndexes = input.steps.filter((s) => s.caseIndex === caseIndex).map((s) => s.stepIndex);
    return {
      caseOutcomes,
      caseFailed: failed,
      retry: { caseIndex, attempt: attemptOf(context, caseIndex) + 1, stepIndexes },
    };
  }
  const flaky = isFlaky(caseOutcomes, input, caseIndex, attemptOf(context, caseIndex))
    ? context.flaky + 1
    : context.flaky;
  return {
    caseOutcomes: caseOutcomes.filter((o) => input.steps[o.stepIndex]!.caseIndex !== caseIndex),
    caseFailed: false,
    flaky,
  };
}

/** The case's attempt just ended, and by the one rule (case-outcome.ts) it passed on a retry. */
function isFlaky(outcomes: readonly StepOutcome[], input: RunInput, caseIndex: number, attempt: number): boolean {
  if (attempt === 1) return false;
  const steps = outcomes
    .filter((o) => input.steps[o.stepIndex]!.caseIndex === caseIndex)
    .map((o) => ({ stepIndex: o.stepIndex, status: o.status, code: o.error?.code ?? null }));
  return judgeCase(tallyOf(steps, attempt)).outcome === 'flaky';
}

/**
 * The retry's batch is durable (its attempt archived, its steps pending again): the case starts
 * over from its first step, its outcomes of the attempt taken out of the counts.
 */
export function rewindCase(context: RunContext): Partial<RunContext> {
  const { steps } = context.input;
  const { caseIndex, attempt } = context.retry!;
  const mine = context.caseOutcomes.filter((o) => steps[o.stepIndex]!.caseIndex === caseIndex);
  const attempts = [...context.attempts];
  attempts[caseIndex] = attempt;
  const quarantined = context.input.quarantinedCases?.includes(caseIndex)
    ? mine.filter((o) => isFailure(o.status)).length
    : 0;
  return {
    cursor: steps.findIndex((s) => s.caseIndex === caseIndex),
    abortedCases: context.abortedCases.filter((c) => c !== caseIndex),
    counts: subtractOutcomes(context.counts, mine),
    quarantinedFailures: context.quarantinedFailures - quarantined,
    caseOutcomes: context.caseOutcomes.filter((o) => steps[o.stepIndex]!.caseIndex !== caseIndex),
    caseFailed: false,
    attempts,
    retry: null,
  };
}
