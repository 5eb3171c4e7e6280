// The run machine's context and the helpers every part of its bookkeeping shares: the service's own
// outcomes, the pending batch, and the one skip rule (which step is sent next).
import { addOutcomes, isFailure } from './counts.js';
import type { CaseRetry, PlannedStep, RunCounts, RunInput, RunOutput, StepOutcome } from './types.js';
import { requiredCapability } from './vars.js';

/** cancel: CANCEL; lost: EXECUTOR_LOST; database: the outage window passed while a write waited. */
export type StopKind = 'cancel' | 'lost' | 'database';

export interface RunContext {
  /** The run's input, kept by reference (not copied). */
  input: RunInput;
  /** In `running`: the step in flight. Elsewhere: the next step not yet decided (steps.length when none). */
  cursor: number;
  /** caseIndex of the test cases cut short by a failure under continueOnFail false. */
  abortedCases: number[];
  /** Outcomes decided but not yet handed to a write (recordSteps or finishRun). */
  pending: StepOutcome[];
  /** Counts over every outcome decided so far (written or pending). */
  counts: RunCounts;
  /** The first CANCEL or EXECUTOR_LOST; later ones do not change it. */
  stop: { kind: StopKind; reason: string } | null;
  /** The executor is gone: nothing more is sent to it (no run.cancel, no run.finished). */
  executorLost: boolean;
  /** Message of a failed recordSteps: the run ends as 'error'. */
  failure: string | null;
  /** Decided on entering `finishing`. */
  output: RunOutput | null;
  /** run.finished went out before its write was durable (the outage window passed): not sent again. */
  told: boolean;
  // ---- Retries (only for test cases that have some: input.retries) ----
  /** The attempt each test case is at, by caseIndex (absent: 1). */
  attempts: number[];
  /** Outcomes decided in the current attempts of cases with retries, until their case is done. */
  caseOutcomes: StepOutcome[];
  /** A step of the current attempt of the case at hand failed or errored. */
  caseFailed: boolean;
  /** A retry decided with the pending batch: once it is durable the case starts over (rewindCase). */
  retry: CaseRetry | null;
  /** Test cases that passed on a retry. */
  flaky: number;
  /** The session's socket is gone and it waits to be resumed: no step.exec goes out, no time-out runs. */
  detached: boolean;
  /** Failed or errored steps of quarantined test cases (input.quarantinedCases), left out of the verdict. */
  quarantinedFailures: number;
}

export function serviceOutcome(
  stepIndex: number,
  status: StepOutcome['status'],
  code: string,
  message: string,
): StepOutcome {
  return { stepIndex, status, source: 'service', error: { code, message } };
}

/** `decided` added to the pending outcomes and the counts. */
export function withDecided(context: RunContext, decided: StepOutcome[]): Pick<RunContext, 'pending' | 'counts'> {
  return { pending: [...context.pending, ...decided], counts: addOutcomes(context.counts, decided) };
}

/** A failure of a step that does not continue on failure cuts its test case short. */
export function abortsCase(step: PlannedStep, status: StepOutcome['status']): boolean {
  return isFailure(status) && !step.continueOnFail;
}

// ---- The skip rule ----

/**
 * The one rule for the steps that are not sent to the executor. Walks from `from` to the first step
 * to send and returns its position (steps.length when none). The steps it passes are not sent:
 * - a step of an aborted test case (in `abortedCases`): its outcome was decided E_SKIPPED when its
 *   case was aborted, so it is passed silently;
 * - a step needing a capability the executor declared false: `refused` is called with it, to
 *   decide its outcome. Only an explicit `false` refuses: a capability the executor did not
 *   mention is unknown, so the step is sent and the executor answers for itself.
 */
export function nextToSend(
  input: RunInput,
  abortedCases: readonly number[],
  from: number,
  refused?: (step: PlannedStep, capability: string) => void,
): number {
  const { steps, capabilities } = input;
  let i = from;
  for (; i < steps.length; i += 1) {
    const step = steps[i]!;
    if (abortedCases.includes(step.caseIndex)) continue;
    const capability = requiredCapability(step.action);
    if (capability === null || capabilities[capability] !== false) break;
    refused?.(step, capability);
  }
  return i;
}
