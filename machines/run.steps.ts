// The run machine's step bookkeeping: which step is sent next, which outcomes are decided without
// the executor, and how a run ends. Pure functions of the run's context; run.machine.ts calls them
// from its guards and `assign` actions.
import { addOutcomes, countOutcomes, emptyCounts, isFailure, verdict } from './counts.js';
import { abortsCase, nextToSend, type RunContext, type StopKind, serviceOutcome, withDecided } from './run.context.js';
import { afterDecided, attemptOf, retriesAfter, retriesOf, rewindCase } from './run.retries.js';
import { stepName, stepPlace } from './step-names.js';
import {
  DEFAULT_OUTAGE_WINDOW_MS,
  OtpErrorCode,
  type PlannedStep,
  type RunCounts,
  type RunInput,
  type RunOutput,
  type StepExecPayload,
  type StepOutcome,
  type StepReport,
} from './types.js';
import { fillVars } from './vars.js';

export type { RunContext, StopKind };
export { attemptOf, nextToSend, rewindCase };

export function initialContext(input: RunInput): RunContext {
  const context: RunContext = {
    input,
    cursor: 0,
    abortedCases: [],
    pending: [],
    counts: emptyCounts(input.steps.length),
    stop: null,
    executorLost: false,
    failure: null,
    output: null,
    told: false,
    attempts: input.attempts ?? [],
    caseOutcomes: [],
    caseFailed: false,
    retry: null,
    flaky: 0,
    detached: input.detached ?? false,
    quarantinedFailures: 0,
  };
  if (!input.recorded?.length) return context;
  const recorded = { ...context, ...alreadyRecorded(input, input.recorded) };
  if (!input.retries) return recorded;
  // A retried case taken over mid-attempt: what its attempt decided so far counts for its retry.
  const caseOutcomes = input.recorded.filter((o) => retriesOf(input, input.steps[o.stepIndex]!.caseIndex) > 0);
  const atCursor = input.steps[recorded.cursor]?.caseIndex;
  const caseFailed = caseOutcomes.some((o) => input.steps[o.stepIndex]!.caseIndex === atCursor && isFailure(o.status));
  return { ...recorded, caseOutcomes, caseFailed };
}

/**
 * A run taken over from another process: its recorded outcomes give the counts, the test cases a
 * failure cut short, and the cursor (the first step without an outcome; steps are decided in order,
 * only the E_SKIPPED rest of an aborted case lies beyond it).
 */
function alreadyRecorded(input: RunInput, recorded: StepOutcome[]): Partial<RunContext> {
  const decided = new Map(recorded.map((outcome) => [outcome.stepIndex, outcome]));
  const abortedCases: number[] = [];
  let quarantinedFailures = 0;
  for (const step of input.steps) {
    const outcome = decided.get(step.stepIndex);
    if (outcome && abortsCase(step, outcome.status) && !abortedCases.includes(step.caseIndex))
      abortedCases.push(step.caseIndex);
    if (outcome && isFailure(outcome.status) && input.quarantinedCases?.includes(step.caseIndex))
      quarantinedFailures += 1;
  }
  let cursor = 0;
  while (cursor < input.steps.length && decided.has(input.steps[cursor]!.stepIndex)) cursor += 1;
  return { cursor, abortedCases, quarantinedFailures, counts: addOutcomes(emptyCounts(input.steps.length), recorded) };
}

/** Moves the cursor to the next step to send, deciding the capability skips on the way. */
export function settle(context: RunContext): Partial<RunContext> {
  // A retry waits for its batch to be durable: the cursor goes back to the case's start then.
  if (context.retry !== null) return {};
  let decided: StepOutcome[] | undefined;
  const cursor = nextToSend(context.input, context.abortedCases, context.cursor, (step, capability) => {
    (decided ??= []).push(
      serviceOutcome(
        step.stepIndex,
        'skip',
        OtpErrorCode.capability,
        `the executor declared capability ${capability} false`,
      ),
    );
  });
  if (cursor === context.cursor) return {};
  if (!decided) return { cursor };
  const retried = context.input.retries
    ? decided.filter((o) => retriesOf(context.input, context.input.steps[o.stepIndex]!.caseIndex) > 0)
    : [];
  return {
    cursor,
    ...withDecided(context, decided),
    ...(retried.length ? { caseOutcomes: [...context.caseOutcomes, ...retried] } : {}),
  };
}

// ---- The step in flight ----

export function isInFlight(context: RunContext, report: StepReport): boolean {
  return context.input.steps[context.cursor]?.stepIndex === report.stepIndex;
}

/**
 * The report is for the step in flight, and once it is decided no step is left to send (nor is its
 * test case run again).
 */
export function isLastInFlight(context: RunContext, report: StepReport): boolean {
  if (!isInFlight(context, report)) return false;
  const step = context.input.steps[context.cursor]!;
  const aborted = abortsCase(step, report.status) ? [...context.abortedCases, step.caseIndex] : context.abortedCases;
  if (nextToSend(context.input, aborted, context.cursor + 1) < context.input.steps.length) return false;
  return !retriesAfter(context, step.caseIndex, context.caseFailed || isFailure(report.status));
}

/** The step.exec payload of the step at the cursor, its {{vars}} filled. */
export function stepExecPayload(context: RunContext): StepExecPayload {
  const step = context.input.steps[context.cursor]!;
  const payload: StepExecPayload = {
    stepIndex: step.stepIndex,
    timeoutMs: step.timeoutMs,
    continueOnFail: step.continueOnFail,
    step: fillVars(step.action, context.input.vars),
  };
  if (step.evidence !== undefined) payload.evidence = step.evidence;
  if (step.label !== undefined) payload.label = step.label;
  const attempt = attemptOf(context, step.caseIndex);
  if (attempt > 1) {
    payload.attempt = attempt;
    // The first step the attempt sends starts in a fresh browser context.
    const first = context.input.steps.findIndex((s) => s.caseIndex === step.caseIndex);
    if (nextToSend(context.input, [], first) === context.cursor) payload.freshContext = true;
  }
  return payload;
}

/** How long the step at the cursor may take before it is decided E_TIMEOUT. */
export function stepTimeoutMs(context: RunContext): number {
  return context.input.steps[context.cursor]!.timeoutMs + context.input.graceMs;
}

/**
 * Decide `outcome` for the step at the cursor and move the cursor one on. When the outcome aborts
 * the test case, the later steps of the case are decided `skip` E_SKIPPED in the same batch and the
 * case is marked aborted (so the skip rule passes them).
 */
export function decideCurrent(context: RunContext, outcome: StepOutcome): Partial<RunContext> {
  const { steps } = context.input;
  const step = steps[context.cursor]!;
  const decided: StepOutcome[] = [outcome];
  let abortedCases = context.abortedCases;
  // A passed step costs the one isFailure it always did; the quarantine is looked at on failures only.
  if (!isFailure(outcome.status)) {
    const passed = { cursor: context.cursor + 1, abortedCases, ...withDecided(context, decided) };
    return retriesOf(context.input, step.caseIndex) > 0
      ? { ...passed, ...afterDecided(context, step, decided, abortedCases) }
      : passed;
  }
  const quarantinedFailures = context.input.quarantinedCases?.includes(step.caseIndex)
    ? context.quarantinedFailures + 1
    : context.quarantinedFailures;
  if (!step.continueOnFail) {
    abortedCases = [...abortedCases, step.caseIndex];
    const message = `${stepName(stepPlace(steps, step.stepIndex))} of the same test case did not pass`;
    for (let i = context.cursor + 1; i < steps.length; i += 1) {
      const later = steps[i]!;
      if (later.caseIndex === step.caseIndex) {
        decided.push(serviceOutcome(later.stepIndex, 'skip', OtpErrorCode.skipped, message));
      }
    }
  }
  const decidedHere = {
    cursor: context.cursor + 1,
    abortedCases,
    quarantinedFailures,
    ...withDecided(context, decided),
  };
  return retriesOf(context.input, step.caseIndex) > 0
    ? { ...decidedHere, ...afterDecided(context, step, decided, abortedCases) }
    : decidedHere;
}

/** The executor's report for the step in flight. */
export function decideReport(context: RunContext, report: StepReport): Partial<RunContext> {
  return decideCurrent(context, { ...report, source: 'executor' });
}

/** decideReport, then settle, as one update (the step.result's transition makes one context, not two). */
export function decideReportAndSettle(context: RunContext, report: StepReport): Partial<RunContext> {
  const decided = decideReport(context, report);
  if (decided.retry) return decided;
  const settled = settle({ ...context, ...decided });
  return settled.cursor === undefined ? decided : { ...decided, ...settled };
}

/** The step in flight got no step.result in time. */
export function decideTimeout(context: RunContext): Partial<RunContext> {
  const step = context.input.steps[context.cursor]!;
  const { graceMs } = context.input;
  const message = `no step.result within ${step.timeoutMs} ms (+${graceMs} ms grace, ${stepTimeoutMs(context)} ms in all)`;
  return decideCurrent(context, serviceOutcome(step.stepIndex, 'error', OtpErrorCode.timeout, message));
}

// ---- Stopping early ----

/** Remembers the first stop (a CANCEL or EXECUTOR_LOST); a lost executor is remembered in any case. */
export function requestStop(context: RunContext, kind: StopKind, reason: string): Partial<RunContext> {
  return {
    stop: context.stop ?? { kind, reason },
    executorLost: context.executorLost || kind === 'lost',
  };
}

/**
 * Every step from the cursor on that has no outcome yet gets one, with `code`: the step in flight
 * (when there is one) `firstStatus`, the later ones `skip`. The steps the skip rule passes silently
 * already have theirs; a capability skip is decided with `code` like any step not sent.
 */
function decideRest(
  context: RunContext,
  inFlight: boolean,
  firstStatus: StepOutcome['status'],
  code: string,
  message: string,
): Partial<RunContext> {
  const { steps } = context.input;
  const decided: StepOutcome[] = [];
  let i = context.cursor;
  if (inFlight && i < steps.length) {
    decided.push(serviceOutcome(steps[i]!.stepIndex, firstStatus, code, message));
    i += 1;
  }
  const skip = (step: PlannedStep) => decided.push(serviceOutcome(step.stepIndex, 'skip', code, message));
  for (; i < steps.length; i += 1) {
    i = nextToSend(context.input, context.abortedCases, i, skip);
    if (i < steps.length) skip(steps[i]!);
  }
  return { cursor: steps.length, ...withDecided(context, decided) };
}

/**
 * The end of a run that no machine drives any more (cancelled while queued, pinned to a session that
 * closed, held by a process that stopped or handed over and lost): every step without an outcome is
 * skipped with `code`, reported ones stand, and the counts follow the same rule as a driven run's.
 */
export function closeUndriven(
  steps: ReadonlyArray<{ stepIndex: number; status: StepOutcome['status'] | 'pending' }>,
  total: number,
  code: string,
  message: string,
): { outcomes: StepOutcome[]; counts: RunCounts } {
  const outcomes = steps
    .filter((s) => s.status === 'pending')
    .map((s) => serviceOutcome(s.stepIndex, 'skip', code, message));
  const reported = steps.filter(
    (s): s is { stepIndex: number; status: StepOutcome['status'] } => s.status !== 'pending',
  );
  return { outcomes, counts: countOutcomes([...reported, ...outcomes], total) };
}

/** The stop (CANCEL, EXECUTOR_LOST or the outage window) decides the rest of the run. */
export function decideStop(context: RunContext, inFlight: boolean): Partial<RunContext> {
  const stop = context.stop!;
  if (stop.kind === 'cancel') return decideRest(context, inFlight, 'skip', OtpErrorCode.cancelled, stop.reason);
  if (stop.kind === 'database')
    return decideRest(context, inFlight, 'skip', OtpErrorCode.databaseUnavailable, stop.reason);
  return decideRest(context, inFlight, 'error', OtpErrorCode.internal, stop.reason);
}

export function outageWindowMs(context: RunContext): number {
  return context.input.outageWindowMs ?? DEFAULT_OUTAGE_WINDOW_MS;
}

/**
 * The outage window passed while a write waited for the database: the run stops here. What was
 * decided stays decided (the pending outcomes are written with the verdict once the database is
 * back); the steps not yet sent are skipped with E_DATABASE_UNAVAILABLE, and the run ends `error`.
 * A stop asked earlier (CANCEL, EXECUTOR_LOST) gives way: the run could not go on either way.
 */
export function decideDatabaseLost(context: RunContext): Partial<RunContext> {
  const seconds = Math.round(outageWindowMs(context) / 1000);
  const reason = `the service's database was unavailable for more than ${seconds} s; the run stopped (its recorded steps are kept)`;
  const stopped = { ...context, stop: { kind: 'database' as const, reason } };
  return { stop: stopped.stop, ...(context.cursor < context.input.steps.length ? decideStop(stopped, false) : {}) };
}

/**
 * A batch answered STEPS_NOT_RECORDED stays pending (handed again to finishRun) and the steps not
 * yet decided are skipped with E_INTERNAL. The run ends as 'error', even when a CANCEL was waiting.
 */
export function decideWriteFailed(context: RunContext, message: string): Partial<RunContext> {
  return {
    failure: message,
    ...decideRest(context, false, 'skip', OtpErrorCode.internal, `run stopped: ${message}`),
  };
}

// ---- Results refused, and the end ----

/** Why a STEP_RESULT that is not for the step in flight is refused. */
export function strayResultReason(context: RunContext, stepIndex: number, running: boolean): string {
  const { steps } = context.input;
  const position = steps.findIndex((step) => step.stepIndex === stepIndex);
  if (position < 0) return `no step ${stepIndex} in this run`;
  const decided =
    position < context.cursor ||
    (position > context.cursor && context.abortedCases.includes(steps[position]!.caseIndex)) ||
    context.pending.some((outcome) => outcome.stepIndex === stepIndex);
  if (decided) return `step ${stepIndex} already has a result`;
  if (running) return `step ${stepIndex} is not in flight (step ${steps[context.cursor]!.stepIndex} is)`;
  return `step ${stepIndex} is not in flight`;
}

/** The run's output once every step has an outcome (decided on entering `finishing`). */
export function decideOutput(context: RunContext): RunOutput {
  const { counts } = context;
  const flaky = context.input.retries ? { flaky: context.flaky } : {};
  if (context.failure !== null) return { status: 'error', counts, ...flaky, reason: context.failure };
  if (context.stop?.kind === 'cancel') return { status: 'cancelled', counts, ...flaky, reason: context.stop.reason };
  if (context.stop?.kind === 'lost' || context.stop?.kind === 'database')
    return { status: 'error', counts, ...flaky, reason: context.stop.reason };
  return { status: verdict(counts, context.quarantinedFailures), counts, ...flaky };
}
