// The run machine's step bookkeeping: which step is sent next, which outcomes are decided without
// the executor, and how a run ends. Pure functions of the run's context; run.machine.ts calls them
// from its guards and `assign` actions.
import { addOutcomes, countOutcomes, emptyCounts, isFailure, verdict } from './counts.js';
import {
  OtpErrorCode,
  type PlannedStep,
  type RunCounts,
  type RunInput,
  type RunOutput,
  type StepExecPayload,
  type StepOutcome,
  type StepReport,
} from './types.js';
import { fillVars, requiredCapability } from './vars.js';

export type StopKind = 'cancel' | 'lost';

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
  /** The session's socket is gone and it waits to be resumed: no step.exec goes out, no time-out runs. */
  detached: boolean;
  /** Failed or errored steps of quarantined test cases (input.quarantinedCases), left out of the verdict. */
  quarantinedFailures: number;
}

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
    detached: input.detached ?? false,
    quarantinedFailures: 0,
  };
  return input.recorded?.length ? { ...context, ...alreadyRecorded(input, input.recorded) } : context;
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
    if (outcome && abortsCase(step, outcome.status) && !abortedCases.includes(step.caseIndex)) abortedCases.push(step.caseIndex);
    if (outcome && isFailure(outcome.status) && input.quarantinedCases?.includes(step.caseIndex)) quarantinedFailures += 1;
  }
  let cursor = 0;
  while (cursor < input.steps.length && decided.has(input.steps[cursor]!.stepIndex)) cursor += 1;
  return { cursor, abortedCases, quarantinedFailures, counts: addOutcomes(emptyCounts(input.steps.length), recorded) };
}

function serviceOutcome(
  stepIndex: number,
  status: StepOutcome['status'],
  code: string,
  message: string,
): StepOutcome {
  return { stepIndex, status, source: 'service', error: { code, message } };
}

/** `decided` added to the pending outcomes and the counts. */
function withDecided(context: RunContext, decided: StepOutcome[]): Pick<RunContext, 'pending' | 'counts'> {
  return { pending: [...context.pending, ...decided], counts: addOutcomes(context.counts, decided) };
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

/** Moves the cursor to the next step to send, deciding the capability skips on the way. */
export function settle(context: RunContext): Partial<RunContext> {
  let decided: StepOutcome[] | undefined;
  const cursor = nextToSend(context.input, context.abortedCases, context.cursor, (step, capability) => {
    (decided ??= []).push(
      serviceOutcome(step.stepIndex, 'skip', OtpErrorCode.capability, `the executor declared capability ${capability} false`),
    );
  });
  if (cursor === context.cursor) return {};
  return decided ? { cursor, ...withDecided(context, decided) } : { cursor };
}

// ---- The step in flight ----

export function isInFlight(context: RunContext, report: StepReport): boolean {
  return context.input.steps[context.cursor]?.stepIndex === report.stepIndex;
}

/** The report is for the step in flight, and once it is decided no step is left to send. */
export function isLastInFlight(context: RunContext, report: StepReport): boolean {
  if (!isInFlight(context, report)) return false;
  const step = context.input.steps[context.cursor]!;
  const aborted = abortsCase(step, report.status) ? [...context.abortedCases, step.caseIndex] : context.abortedCases;
  return nextToSend(context.input, aborted, context.cursor + 1) >= context.input.steps.length;
}

/** A failure of a step that does not continue on failure cuts its test case short. */
function abortsCase(step: PlannedStep, status: StepOutcome['status']): boolean {
  return isFailure(status) && !step.continueOnFail;
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
  if (!isFailure(outcome.status)) return { cursor: context.cursor + 1, abortedCases, ...withDecided(context, decided) };
  const quarantinedFailures = context.input.quarantinedCases?.includes(step.caseIndex) ? context.quarantinedFailures + 1 : context.quarantinedFailures;
  if (!step.continueOnFail) {
    abortedCases = [...abortedCases, step.caseIndex];
    const message = `step ${step.stepIndex + 1} (stepIndex ${step.stepIndex}) of the same test case did not pass`;
    for (let i = context.cursor + 1; i < steps.length; i += 1) {
      const later = steps[i]!;
      if (later.caseIndex === step.caseIndex) {
        decided.push(serviceOutcome(later.stepIndex, 'skip', OtpErrorCode.skipped, message));
      }
    }
  }
  return { cursor: context.cursor + 1, abortedCases, quarantinedFailures, ...withDecided(context, decided) };
}

/** The executor's report for the step in flight. */
export function decideReport(context: RunContext, report: StepReport): Partial<RunContext> {
  return decideCurrent(context, { ...report, source: 'executor' });
}

/** decideReport, then settle, as one update (the step.result's transition makes one context, not two). */
export function decideReportAndSettle(context: RunContext, report: StepReport): Partial<RunContext> {
  const decided = decideReport(context, report);
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
  const outcomes = steps.filter((s) => s.status === 'pending').map((s) => serviceOutcome(s.stepIndex, 'skip', code, message));
  const reported = steps.filter((s): s is { stepIndex: number; status: StepOutcome['status'] } => s.status !== 'pending');
  return { outcomes, counts: countOutcomes([...reported, ...outcomes], total) };
}

/** The stop (CANCEL or EXECUTOR_LOST) decides the rest of the run. */
export function decideStop(context: RunContext, inFlight: boolean): Partial<RunContext> {
  const stop = context.stop!;
  return stop.kind === 'cancel'
    ? decideRest(context, inFlight, 'skip', OtpErrorCode.cancelled, stop.reason)
    : decideRest(context, inFlight, 'error', OtpErrorCode.internal, stop.reason);
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
  if (context.failure !== null) return { status: 'error', counts, reason: context.failure };
  if (context.stop?.kind === 'cancel') return { status: 'cancelled', counts, reason: context.stop.reason };
  if (context.stop?.kind === 'lost') return { status: 'error', counts, reason: context.stop.reason };
  return { status: verdict(counts, context.quarantinedFailures), counts };
}
