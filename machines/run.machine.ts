// The run machine: drives one run's steps over an executor session, one step in flight at a time.
//
// Pure: every effect is a named action or actor with a harmless default here; src/ supplies the
// real ones with `runMachine.provide({ actions, actors })`. Effects get their data as `params`,
// never by reading the context.
//
// States
//   starting  — run.start has been sent (root entry); waits for the internal RUN_STARTED that the
//               `afterStart` callback actor sends once the actor is running. Reason: XState starts
//               the children invoked by the initial macrostep *before* it runs that macrostep's
//               entry actions, so a run whose first move is a write (zero steps, or a leading
//               capability skip) would call finishRun/recordSteps before sendRunStart.
//               Everything stays synchronous: after actor.start() returns, step 0 is in flight.
//   advancing (transient) — moves the cursor past steps that are already decided (the rest of an
//             aborted test case) or that are decided without the executor (capability skips), then
//             goes to `finishing` (no step left), `recording` (outcomes waiting to be written) or
//             `running` (send the step at the cursor). Entered at the start and after a time-out; a
//             STEP_RESULT does the same settling on its own transition, to `recording` or, when no
//             step is left to send, `finishing` (the hot path: one macrostep per result).
//   recording — the recordSteps action makes the pending outcomes durable and answers with
//               STEPS_RECORDED or STEPS_NOT_RECORDED; nothing is sent before that answer. CANCEL /
//               EXECUTOR_LOST are remembered and acted on once the write has been answered. (An
//               action and an answering event rather than an invoked promise: the invoke created a
//               child actor per step, the largest single cost of a step in the profile.)
//   running   — one step.exec in flight; ends with its STEP_RESULT, its time-out, CANCEL or
//               EXECUTOR_LOST. Entered from `recording` only with the cursor at a step to send.
//   finishing — finishRun writes the last pending outcomes and the verdict together.
//   done      — final; output is the RunOutput.
//
// Invariant: every stepIndex gets exactly one outcome, and it is written by exactly one recordSteps
// answered STEPS_RECORDED or one successful finishRun. The one exception to "handed over once": a
// batch answered STEPS_NOT_RECORDED is handed again to finishRun (see `recordWriteFailed`), so src
// must write each batch atomically (all or nothing).
import { assign, fromCallback, fromPromise, setup } from 'xstate';
import { addOutcomes, emptyCounts, isFailure, verdict } from './counts.js';
import {
  OtpErrorCode,
  type FinishRunInput,
  type PlannedStep,
  type RecordStepsInput,
  type RejectStepResultParams,
  type RunCancelParams,
  type RunCounts,
  type RunEvent,
  type RunFinishedParams,
  type RunInput,
  type RunOutput,
  type RunStartParams,
  type StepExecPayload,
  type StepOutcome,
  type StepReport,
} from './types.js';
import { fillVars, requiredCapability } from './vars.js';

type StopKind = 'cancel' | 'lost';

export interface RunContext {
  /** The run's input, kept by reference (not copied). */
  input: RunInput;
  /** In `running`: the step in flight. Elsewhere: the next step not yet decided (steps.length when none). */
  cursor: number;
  /** caseIndex of the test cases cut short by a failure under continueOnFail false. */
  abortedCases: number[];
  /** Outcomes decided but not yet handed to recordSteps or finishRun. */
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
}

/** Internal: sent by the `afterStart` child, never from outside. */
type RunStartedEvent = { type: 'RUN_STARTED' };

/** Reason given to run.cancel and written on the cancelled steps when CANCEL carries none. */
export const DEFAULT_CANCEL_REASON = 'cancel requested';

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return String(error);
}

function serviceOutcome(
  stepIndex: number,
  status: StepOutcome['status'],
  code: string,
  message: string,
): StepOutcome {
  return { stepIndex, status, source: 'service', error: { code, message } };
}

function isAborted(context: RunContext, step: PlannedStep): boolean {
  return context.abortedCases.includes(step.caseIndex);
}

/**
 * The capability the executor declared false that this step needs, or null. Only an explicit
 * `false` skips a step: a capability the executor did not mention is unknown, not refused; the step
 * is sent and the executor answers for itself.
 */
function refusedCapability(context: RunContext, step: PlannedStep): string | null {
  const capability = requiredCapability(step.action);
  return capability !== null && context.input.capabilities[capability] === false ? capability : null;
}

/**
 * Index of the first step from `from` on that will be sent to the executor: not in an aborted test
 * case (nor in `abortingCase`, about to be aborted), not skipped for a capability. steps.length when
 * there is none.
 */
function nextToSend(context: RunContext, from: number, abortingCase: number | null): number {
  const { steps } = context.input;
  let i = from;
  while (
    i < steps.length &&
    (steps[i]!.caseIndex === abortingCase || isAborted(context, steps[i]!) || refusedCapability(context, steps[i]!) !== null)
  ) {
    i += 1;
  }
  return i;
}

function isInFlight(context: RunContext, report: StepReport): boolean {
  return context.input.steps[context.cursor]?.stepIndex === report.stepIndex;
}

/**
 * Decide `outcome` for the step at the cursor and move the cursor one on. When the outcome is a
 * failure and the step does not continue on failure, the later steps of the same test case are
 * decided `skip` E_SKIPPED in the same batch and the case is marked aborted (never sent).
 */
function decideCurrent(context: RunContext, outcome: StepOutcome): Partial<RunContext> {
  const { steps } = context.input;
  const step = steps[context.cursor]!;
  const decided: StepOutcome[] = [outcome];
  let abortedCases = context.abortedCases;
  if (isFailure(outcome.status) && !step.continueOnFail) {
    abortedCases = [...abortedCases, step.caseIndex];
    const message = `step ${step.stepIndex} of the same test case did not pass`;
    for (let i = context.cursor + 1; i < steps.length; i += 1) {
      const later = steps[i]!;
      if (later.caseIndex === step.caseIndex) {
        decided.push(serviceOutcome(later.stepIndex, 'skip', OtpErrorCode.skipped, message));
      }
    }
  }
  return {
    cursor: context.cursor + 1,
    abortedCases,
    pending: [...context.pending, ...decided],
    counts: addOutcomes(context.counts, decided),
  };
}

/**
 * Every step from the cursor on that has no outcome yet gets one: the step in flight (when there
 * is one) `firstStatus`, the later ones `skip`, all with `code`.
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
  for (; i < steps.length; i += 1) {
    const step = steps[i]!;
    if (!isAborted(context, step)) {
      decided.push(serviceOutcome(step.stepIndex, 'skip', code, message));
    }
  }
  return {
    cursor: steps.length,
    pending: [...context.pending, ...decided],
    counts: addOutcomes(context.counts, decided),
  };
}

/** Why a STEP_RESULT that is not for the step in flight is refused. */
export function strayResultReason(context: RunContext, stepIndex: number, running: boolean): string {
  const { steps } = context.input;
  const position = steps.findIndex((step) => step.stepIndex === stepIndex);
  if (position < 0) return `no step ${stepIndex} in this run`;
  const decided =
    position < context.cursor ||
    (position > context.cursor && isAborted(context, steps[position]!)) ||
    context.pending.some((outcome) => outcome.stepIndex === stepIndex);
  if (decided) return `step ${stepIndex} already has a result`;
  if (running) return `step ${stepIndex} is not in flight (step ${steps[context.cursor]!.stepIndex} is)`;
  return `step ${stepIndex} is not in flight`;
}

function decideOutput(context: RunContext): RunOutput {
  const { counts } = context;
  if (context.failure !== null) return { status: 'error', counts, reason: context.failure };
  if (context.stop?.kind === 'cancel') return { status: 'cancelled', counts, reason: context.stop.reason };
  if (context.stop?.kind === 'lost') return { status: 'error', counts, reason: context.stop.reason };
  return { status: verdict(counts), counts };
}

export const runMachine = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunInput,
    output: {} as RunOutput,
    events: {} as RunEvent | RunStartedEvent,
  },
  actions: {
    // Effects: harmless defaults, replaced by src/.
    sendRunStart: (_, _params: RunStartParams) => {},
    sendStepExec: (_, _params: StepExecPayload) => {},
    recordSteps: (_, _params: RecordStepsInput) => {},
    sendRunCancel: (_, _params: RunCancelParams) => {},
    sendRunFinished: (_, _params: RunFinishedParams) => {},
    rejectStepResult: (_, _params: RejectStepResultParams) => {},

    // Context updates (internal).
    settle: assign(({ context }) => {
      const { steps } = context.input;
      let cursor = context.cursor;
      const decided: StepOutcome[] = [];
      while (cursor < steps.length) {
        const step = steps[cursor]!;
        if (isAborted(context, step)) {
          cursor += 1; // already decided E_SKIPPED when its test case was aborted
          continue;
        }
        const capability = refusedCapability(context, step);
        if (capability !== null) {
          decided.push(
            serviceOutcome(
              step.stepIndex,
              'skip',
              OtpErrorCode.capability,
              `the executor declared capability ${capability} false`,
            ),
          );
          cursor += 1;
          continue;
        }
        break;
      }
      if (cursor === context.cursor) return {};
      return {
        cursor,
        pending: [...context.pending, ...decided],
        counts: addOutcomes(context.counts, decided),
      };
    }),
    recordReport: assign(({ context }, params: { report: StepReport }) =>
      decideCurrent(context, { ...params.report, source: 'executor' }),
    ),
    recordTimeout: assign(({ context }) => {
      const step = context.input.steps[context.cursor]!;
      const waited = step.timeoutMs + context.input.graceMs;
      return decideCurrent(
        context,
        serviceOutcome(
          step.stepIndex,
          'error',
          OtpErrorCode.timeout,
          `no step.result within ${step.timeoutMs} ms (+${context.input.graceMs} ms grace, ${waited} ms in all)`,
        ),
      );
    }),
    clearPending: assign({ pending: () => [] }),
    requestStop: assign(({ context }, params: { kind: StopKind; reason: string }) => ({
      stop: context.stop ?? { kind: params.kind, reason: params.reason },
      executorLost: context.executorLost || params.kind === 'lost',
    })),
    markExecutorLost: assign({ executorLost: () => true }),
    stopRest: assign(({ context }, params: { inFlight: boolean }) => {
      const stop = context.stop!;
      return stop.kind === 'cancel'
        ? decideRest(context, params.inFlight, 'skip', OtpErrorCode.cancelled, stop.reason)
        : decideRest(context, params.inFlight, 'error', OtpErrorCode.internal, stop.reason);
    }),
    // STEPS_NOT_RECORDED: the batch stays pending (handed again to finishRun) and the steps not
    // yet decided are skipped with E_INTERNAL. A failed write ends the run as 'error' even when a
    // CANCEL was waiting for it.
    recordWriteFailed: assign(({ context }, params: { message: string }) => ({
      failure: params.message,
      ...decideRest(context, false, 'skip', OtpErrorCode.internal, `run stopped: ${params.message}`),
    })),
    decideOutput: assign({ output: ({ context }) => decideOutput(context) }),
    finishWriteFailed: assign(({ context }, params: { message: string }) => ({
      output: { status: 'error' as const, counts: context.counts, reason: params.message },
    })),
  },
  actors: {
    finishRun: fromPromise<void, FinishRunInput>(async () => {}),
    // Internal (see `starting`); not meant to be replaced.
    afterStart: fromCallback<RunStartedEvent>(({ sendBack }) => {
      sendBack({ type: 'RUN_STARTED' });
    }),
  },
  guards: {
    allDecided: ({ context }) => context.cursor >= context.input.steps.length,
    hasPending: ({ context }) => context.pending.length > 0,
    stopRequested: ({ context }) => context.stop !== null,
    cancelRequested: ({ context }) => context.stop?.kind === 'cancel' && !context.executorLost,
    executorLost: ({ context }) => context.executorLost,
    isInFlight: ({ context }, params: { report: StepReport }) => isInFlight(context, params.report),
    // The report is for the step in flight and leaves no step to send: the last outcomes go to
    // finishRun with the verdict, in one write.
    isLastInFlight: ({ context }, params: { report: StepReport }) => {
      if (!isInFlight(context, params.report)) return false;
      const step = context.input.steps[context.cursor]!;
      const aborting = isFailure(params.report.status) && !step.continueOnFail ? step.caseIndex : null;
      return nextToSend(context, context.cursor + 1, aborting) >= context.input.steps.length;
    },
  },
  delays: {
    stepTimeout: ({ context }) =>
      context.input.steps[context.cursor]!.timeoutMs + context.input.graceMs,
  },
}).createMachine({
  id: 'run',
  context: ({ input }) => ({
    input,
    cursor: 0,
    abortedCases: [],
    pending: [],
    counts: emptyCounts(input.steps.length),
    stop: null,
    executorLost: false,
    failure: null,
    output: null,
  }),
  entry: { type: 'sendRunStart', params: ({ context }) => ({ runId: context.input.runId }) },
  initial: 'starting',
  output: ({ context }) => context.output!,
  states: {
    starting: {
      invoke: {
        src: 'afterStart',
        // It cannot fail in practice; if it did, the run simply goes on.
        onError: { target: 'advancing' },
      },
      on: { RUN_STARTED: { target: 'advancing' } },
    },

    advancing: {
      entry: 'settle',
      always: [
        { guard: 'allDecided', target: 'finishing' },
        { guard: 'hasPending', target: 'recording' },
        { target: 'running' },
      ],
    },

    recording: {
      entry: {
        type: 'recordSteps',
        params: ({ context }) => ({ runId: context.input.runId, outcomes: context.pending }),
      },
      on: {
        STEPS_RECORDED: [
          {
            // A CANCEL arrived during the write: act on it now that the write is durable.
            guard: 'cancelRequested',
            target: 'finishing',
            actions: [
              'clearPending',
              {
                type: 'sendRunCancel',
                params: ({ context }) => ({ runId: context.input.runId, reason: context.stop!.reason }),
              },
              { type: 'stopRest', params: { inFlight: false } },
            ],
          },
          {
            // EXECUTOR_LOST (or CANCEL, then the executor went away) during the write.
            guard: 'stopRequested',
            target: 'finishing',
            actions: ['clearPending', { type: 'stopRest', params: { inFlight: false } }],
          },
          // The cursor was settled before the write: it is at a step to send, or past the last.
          { guard: 'allDecided', target: 'finishing', actions: 'clearPending' },
          { target: 'running', actions: 'clearPending' },
        ],
        STEPS_NOT_RECORDED: {
          target: 'finishing',
          actions: {
            type: 'recordWriteFailed',
            params: ({ event }) => ({ message: event.message }),
          },
        },
        CANCEL: {
          actions: {
            type: 'requestStop',
            params: ({ event }) => ({ kind: 'cancel' as const, reason: event.reason ?? DEFAULT_CANCEL_REASON }),
          },
        },
        EXECUTOR_LOST: {
          actions: {
            type: 'requestStop',
            params: ({ event }) => ({ kind: 'lost' as const, reason: event.reason }),
          },
        },
        STEP_RESULT: {
          actions: {
            type: 'rejectStepResult',
            params: ({ context, event }) => ({
              stepIndex: event.report.stepIndex,
              reason: strayResultReason(context, event.report.stepIndex, false),
              ...(event.ref ? { ref: event.ref } : {}),
            }),
          },
        },
      },
    },

    running: {
      entry: {
        type: 'sendStepExec',
        params: ({ context }): StepExecPayload => {
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
        },
      },
      after: {
        stepTimeout: { target: 'advancing', actions: 'recordTimeout' },
      },
      on: {
        STEP_RESULT: [
          {
            guard: { type: 'isLastInFlight', params: ({ event }) => ({ report: event.report }) },
            target: 'finishing',
            actions: [{ type: 'recordReport', params: ({ event }) => ({ report: event.report }) }, 'settle'],
          },
          {
            // Straight to `recording`, settling the cursor on the way: the hot path of a run, one
            // transition per step.result and one per write.
            guard: { type: 'isInFlight', params: ({ event }) => ({ report: event.report }) },
            target: 'recording',
            actions: [{ type: 'recordReport', params: ({ event }) => ({ report: event.report }) }, 'settle'],
          },
          {
            // Late (after its time-out), duplicate or unknown: refused, the run is unchanged.
            actions: {
              type: 'rejectStepResult',
              params: ({ context, event }) => ({
                stepIndex: event.report.stepIndex,
                reason: strayResultReason(context, event.report.stepIndex, true),
                ...(event.ref ? { ref: event.ref } : {}),
              }),
            },
          },
        ],
        CANCEL: {
          target: 'finishing',
          actions: [
            {
              type: 'requestStop',
              params: ({ event }) => ({ kind: 'cancel' as const, reason: event.reason ?? DEFAULT_CANCEL_REASON }),
            },
            {
              type: 'sendRunCancel',
              params: ({ context }) => ({ runId: context.input.runId, reason: context.stop!.reason }),
            },
            { type: 'stopRest', params: { inFlight: true } },
          ],
        },
        EXECUTOR_LOST: {
          target: 'finishing',
          actions: [
            {
              type: 'requestStop',
              params: ({ event }) => ({ kind: 'lost' as const, reason: event.reason }),
            },
            { type: 'stopRest', params: { inFlight: true } },
          ],
        },
      },
    },

    finishing: {
      entry: 'decideOutput',
      invoke: {
        src: 'finishRun',
        input: ({ context }) => ({
          runId: context.input.runId,
          outcomes: context.pending,
          ...context.output!,
        }),
        onDone: [
          { guard: 'executorLost', target: 'done' },
          {
            target: 'done',
            actions: {
              type: 'sendRunFinished',
              params: ({ context }) => ({ runId: context.input.runId, ...context.output! }),
            },
          },
        ],
        // finishRun rejected: the run still ends (no retry loop here), as 'error' with the write's
        // message. The executor, if still there, is told run.finished with that status so it does
        // not wait for a run this service has dropped; recovery of the stored row is src's job.
        onError: [
          {
            guard: 'executorLost',
            target: 'done',
            actions: {
              type: 'finishWriteFailed',
              params: ({ event }) => ({ message: errorMessage(event.error) }),
            },
          },
          {
            target: 'done',
            actions: [
              {
                type: 'finishWriteFailed',
                params: ({ event }) => ({ message: errorMessage(event.error) }),
              },
              {
                type: 'sendRunFinished',
                params: ({ context }) => ({ runId: context.input.runId, ...context.output! }),
              },
            ],
          },
        ],
      },
      on: {
        // The outcome is already decided; a late CANCEL changes nothing.
        CANCEL: {},
        EXECUTOR_LOST: { actions: 'markExecutorLost' },
        STEP_RESULT: {
          actions: {
            type: 'rejectStepResult',
            params: ({ context, event }) => ({
              stepIndex: event.report.stepIndex,
              reason: strayResultReason(context, event.report.stepIndex, false),
              ...(event.ref ? { ref: event.ref } : {}),
            }),
          },
        },
      },
    },

    done: { type: 'final' },
  },
});
