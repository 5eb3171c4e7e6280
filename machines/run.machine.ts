// The run machine: drives one run's steps over an executor session, one step in flight at a time.
//
// Pure. Every effect is emitted (types.ts, RunEffect) for the run's driver, which listens with
// `actor.on('*', ...)`; the two durable writes, `recordSteps` and `finishRun`, are answered with
// events. Emitted effects reach the listener in the order the machine decides them, after each
// macrostep, so `sendRunStart` (root entry) always comes before any write is requested. The step
// bookkeeping (what is sent next, what is decided without the executor) is in run.steps.ts.
//
// States
//   advancing (transient) — settles the cursor (run.steps.ts, `nextToSend`), then: no step left →
//             finishing; outcomes to write → recording; else → running. Entered at the start and
//             after a time-out. A STEP_RESULT settles on its own transition instead (the hot path).
//   recording — recordSteps writes the pending outcomes; nothing is sent until STEPS_RECORDED.
//               CANCEL / EXECUTOR_LOST are remembered and acted on once the write is answered.
//   running   — one step.exec in flight, until its STEP_RESULT, its time-out, CANCEL or EXECUTOR_LOST.
//   paused    — the step at the cursor waits: the session is detached (its socket dropped, it waits
//               to be resumed) and no time-out runs. EXECUTOR_RESUMED → running: the step.exec goes
//               out again (the same step: the driver sends the same frame) and its time-out starts
//               over. CANCEL and EXECUTOR_LOST as in running.
// EXECUTOR_DETACHED / EXECUTOR_RESUMED elsewhere only set `detached`: a write answered meanwhile
// leads to `paused`; what else the run sends (run.cancel, run.finished) the session holds until it
// is resumed.
//   held      — the batch of `recording` waits for the database to come back (DB_UNAVAILABLE): the
//               driver keeps trying the same write and answers it as usual. Nothing is sent and no
//               time-out runs; CANCEL / EXECUTOR_LOST are remembered as in recording. When the outage
//               outlasts `outageWindow`, the run stops: the steps not yet sent are skipped with
//               E_DATABASE_UNAVAILABLE and it goes to abandoned.
//   finishing — finishRun writes the last pending outcomes and the verdict together; then
//               run.finished is sent (unless the executor is gone).
//   finishHeld — the verdict's write waits for the database (DB_UNAVAILABLE); past `outageWindow`
//               → abandoned.
//   abandoned — the outage outlasted the window: the run ends `error` (E_DATABASE_UNAVAILABLE),
//               run.finished goes out at once, and finishRun is asked again with that verdict,
//               durable once the database is back (the driver drops the write that waited).
//   done      — final; output is the RunOutput.
//
// Invariant: every stepIndex gets exactly one outcome, written by exactly one recordSteps answered
// STEPS_RECORDED or by the finishRun. The one exception: a batch answered STEPS_NOT_RECORDED is
// handed again to finishRun, so each batch must be written atomically (all or nothing).
import { assertEvent, assign, emit, setup } from 'xstate';
import {
  decideDatabaseLost,
  decideOutput,
  decideReportAndSettle,
  decideStop,
  decideTimeout,
  decideWriteFailed,
  initialContext,
  isInFlight,
  isLastInFlight,
  outageWindowMs,
  type RunContext,
  requestStop,
  rewindCase,
  settle,
  stepExecPayload,
  stepTimeoutMs,
  strayResultReason,
} from './run.steps.js';
import { CANCELLED_BY_REQUEST, type RunEffect, type RunEvent, type RunInput, type RunOutput } from './types.js';

// The batch is durable (answered in recording, or in held once the database came back).
const whenStepsRecorded = [
  {
    // A CANCEL arrived during the write: act on it now that the write is durable.
    guard: 'cancelRequested',
    target: 'finishing',
    actions: ['clearPending', 'sendRunCancel', { type: 'decideStop', params: { inFlight: false } }],
  },
  {
    // EXECUTOR_LOST (or CANCEL, then the executor went away) during the write.
    guard: 'stopRequested',
    target: 'finishing',
    actions: ['clearPending', { type: 'decideStop', params: { inFlight: false } }],
  },
  // A test case failed and runs again: the batch archived its attempt; back to its first step.
  { guard: 'retryDecided', target: 'advancing', actions: ['clearPending', 'rewindCase'] },
  // The cursor was settled before the write: it is at a step to send, or past the last.
  { guard: 'allDecided', target: 'finishing', actions: 'clearPending' },
  { guard: 'detached', target: 'paused', actions: 'clearPending' },
  // The usual answer: the next step goes out.
  { target: 'running', actions: 'clearPending' },
] as const;

// A batch is being written (recording, and held while the database is away): it becomes durable, or
// it does not; a stop asked meanwhile waits for the answer.
const whileRecording = {
  STEPS_RECORDED: whenStepsRecorded,
  STEPS_NOT_RECORDED: { target: 'finishing', actions: 'decideWriteFailed' },
  CANCEL: { actions: 'requestStop' },
  EXECUTOR_LOST: { actions: 'requestStop' },
  STEP_RESULT: { actions: { type: 'rejectStepResult', params: { running: false } } },
} as const;

// The verdict is being written (finishing, finishHeld, abandoned): it is durable, or it is not.
const whileFinishing = {
  RUN_FINISH_WRITTEN: [
    { guard: 'nothingToTell', target: 'done' },
    { target: 'done', actions: 'sendRunFinished' },
  ],
  // The run still ends (no retry here), as 'error'. The executor, if still there, is told
  // run.finished with that status so it does not wait for a run this service has dropped;
  // recovering the stored row is left outside this machine.
  RUN_FINISH_FAILED: [
    { guard: 'nothingToTell', target: 'done', actions: 'finishWriteFailed' },
    { target: 'done', actions: ['finishWriteFailed', 'sendRunFinished'] },
  ],
  // The outcome is already decided; a late CANCEL changes nothing.
  CANCEL: {},
  EXECUTOR_LOST: { actions: 'markExecutorLost' },
  STEP_RESULT: { actions: { type: 'rejectStepResult', params: { running: false } } },
} as const;

/**
 * Past the outage window (`decide`: the verdict it leaves): the run is `abandoned`. The verdict is
 * asked for again, and the executor, unless it is gone, hears run.finished at once (and not again
 * once the verdict is written).
 */
function abandon<const D extends readonly string[]>(decide: D) {
  return [
    { guard: 'executorLost', target: 'abandoned', actions: [...decide, 'finishRun'] },
    { target: 'abandoned', actions: [...decide, 'finishRun', 'sendRunFinished', 'markTold'] },
  ] as const;
}

export const runMachine = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunInput,
    output: {} as RunOutput,
    events: {} as RunEvent,
    emitted: {} as RunEffect,
  },
  actions: {
    // Effects, emitted for the driver.
    sendRunStart: emit(({ context }) => ({ type: 'sendRunStart' as const, runId: context.input.runId })),
    sendStepExec: emit(({ context }) => ({ type: 'sendStepExec' as const, payload: stepExecPayload(context) })),
    recordSteps: emit(({ context }) =>
      context.retry
        ? { type: 'recordSteps' as const, runId: context.input.runId, outcomes: context.pending, retry: context.retry }
        : { type: 'recordSteps' as const, runId: context.input.runId, outcomes: context.pending },
    ),
    sendRunCancel: emit(({ context }) => ({
      type: 'sendRunCancel' as const,
      runId: context.input.runId,
      reason: context.stop!.reason,
    })),
    finishRun: emit(({ context }) => ({
      type: 'finishRun' as const,
      runId: context.input.runId,
      outcomes: context.pending,
      ...context.output!,
    })),
    sendRunFinished: emit(({ context }) => ({
      type: 'sendRunFinished' as const,
      runId: context.input.runId,
      ...context.output!,
    })),
    // Late (after its time-out), duplicate or unknown: refused, the run is unchanged.
    rejectStepResult: emit(({ context, event }, params: { running: boolean }) => {
      assertEvent(event, 'STEP_RESULT');
      const { stepIndex } = event.report;
      return {
        type: 'rejectStepResult' as const,
        stepIndex,
        reason: strayResultReason(context, stepIndex, params.running),
        ...(event.ref ? { ref: event.ref } : {}),
      };
    }),

    // Context updates (run.steps.ts).
    settle: assign(({ context }) => settle(context)),
    // The hot path's one context update: the report decided and the cursor settled on the next step.
    decideReport: assign(({ context, event }) => {
      assertEvent(event, 'STEP_RESULT');
      return decideReportAndSettle(context, event.report);
    }),
    decideTimeout: assign(({ context }) => decideTimeout(context)),
    clearPending: assign({ pending: () => [] }),
    // The retry's batch is durable: its case starts over from its first step (run.steps.ts).
    rewindCase: assign(({ context }) => rewindCase(context)),
    requestStop: assign(({ context, event }) => {
      assertEvent(event, ['CANCEL', 'EXECUTOR_LOST']);
      return event.type === 'CANCEL'
        ? requestStop(context, 'cancel', event.reason ?? CANCELLED_BY_REQUEST)
        : requestStop(context, 'lost', event.reason);
    }),
    markExecutorLost: assign({ executorLost: () => true }),
    markDetached: assign({ detached: () => true }),
    markAttached: assign({ detached: () => false }),
    decideStop: assign(({ context }, params: { inFlight: boolean }) => decideStop(context, params.inFlight)),
    decideWriteFailed: assign(({ context, event }) => {
      assertEvent(event, 'STEPS_NOT_RECORDED');
      return decideWriteFailed(context, event.message);
    }),
    decideOutput: assign({ output: ({ context }) => decideOutput(context) }),
    decideDatabaseLost: assign(({ context }) => decideDatabaseLost(context)),
    // The verdict waited past the window: the run ends as 'error' for the database, whatever was decided.
    decideDatabaseLostAtFinish: assign(({ context }) => {
      const stopped = { ...context, ...decideDatabaseLost(context) };
      return { stop: stopped.stop, output: decideOutput(stopped) };
    }),
    // run.finished went out as the outage window passed: not again once the verdict is written.
    markTold: assign({ told: () => true }),
    // The finishing write failed: the run ends as 'error' with the write's message.
    finishWriteFailed: assign(({ context, event }) => {
      assertEvent(event, 'RUN_FINISH_FAILED');
      return {
        output: {
          status: 'error' as const,
          counts: context.counts,
          ...(context.input.retries ? { flaky: context.flaky } : {}),
          reason: event.message,
        },
      };
    }),
  },
  guards: {
    // Every step has its outcome and no retry waits to start its case over.
    allDecided: ({ context }) => context.cursor >= context.input.steps.length && context.retry === null,
    retryDecided: ({ context }) => context.retry !== null,
    hasPending: ({ context }) => context.pending.length > 0,
    stopRequested: ({ context }) => context.stop !== null,
    cancelRequested: ({ context }) => context.stop?.kind === 'cancel' && !context.executorLost,
    executorLost: ({ context }) => context.executorLost,
    // run.finished needs no sending: the executor is gone, or was told when the outage window passed.
    nothingToTell: ({ context }) => context.executorLost || context.told,
    detached: ({ context }) => context.detached,
    isInFlight: ({ context, event }) => event.type === 'STEP_RESULT' && isInFlight(context, event.report),
    isLastInFlight: ({ context, event }) => event.type === 'STEP_RESULT' && isLastInFlight(context, event.report),
  },
  delays: {
    stepTimeout: ({ context }) => stepTimeoutMs(context),
    outageWindow: ({ context }) => outageWindowMs(context),
  },
}).createMachine({
  id: 'run',
  context: ({ input }) => initialContext(input),
  // Also for a run taken over from another process (input.recorded): the executor may not have had
  // its run.start (held while its session was detached); one that has the run ignores it.
  entry: 'sendRunStart',
  initial: 'advancing',
  output: ({ context }) => context.output!,
  on: {
    EXECUTOR_DETACHED: { actions: 'markDetached' },
    EXECUTOR_RESUMED: { actions: 'markAttached' },
  },
  states: {
    advancing: {
      entry: 'settle',
      always: [
        { guard: 'allDecided', target: 'finishing' },
        { guard: 'hasPending', target: 'recording' },
        { guard: 'detached', target: 'paused' },
        { target: 'running' },
      ],
    },

    recording: {
      entry: 'recordSteps',
      on: { ...whileRecording, DB_UNAVAILABLE: 'held' },
    },

    // The batch waits for the database; it is answered as in recording.
    held: {
      after: { outageWindow: abandon(['decideDatabaseLost', 'decideOutput']) },
      on: whileRecording,
    },

    running: {
      entry: 'sendStepExec',
      after: {
        stepTimeout: { target: 'advancing', actions: 'decideTimeout' },
      },
      on: {
        STEP_RESULT: [
          // The last step to send: its outcome goes to finishRun with the verdict, in one write.
          { guard: 'isLastInFlight', target: 'finishing', actions: 'decideReport' },
          // Straight to `recording`, settling the cursor on the way: one transition per result.
          { guard: 'isInFlight', target: 'recording', actions: 'decideReport' },
          { actions: { type: 'rejectStepResult', params: { running: true } } },
        ],
        CANCEL: {
          target: 'finishing',
          actions: ['requestStop', 'sendRunCancel', { type: 'decideStop', params: { inFlight: true } }],
        },
        EXECUTOR_LOST: {
          target: 'finishing',
          actions: ['requestStop', { type: 'decideStop', params: { inFlight: true } }],
        },
        EXECUTOR_DETACHED: { target: 'paused', actions: 'markDetached' },
      },
    },

    // The step at the cursor waits for the session to be resumed; its time-out does not run.
    paused: {
      on: {
        EXECUTOR_RESUMED: { target: 'running', actions: 'markAttached' },
        CANCEL: {
          target: 'finishing',
          actions: ['requestStop', 'sendRunCancel', { type: 'decideStop', params: { inFlight: true } }],
        },
        EXECUTOR_LOST: {
          target: 'finishing',
          actions: ['requestStop', { type: 'decideStop', params: { inFlight: true } }],
        },
        STEP_RESULT: { actions: { type: 'rejectStepResult', params: { running: false } } },
      },
    },

    finishing: {
      entry: ['decideOutput', 'finishRun'],
      on: { ...whileFinishing, DB_UNAVAILABLE: 'finishHeld' },
    },

    // The verdict's write waits for the database; it is answered as in finishing.
    finishHeld: {
      after: { outageWindow: abandon(['decideDatabaseLostAtFinish']) },
      on: whileFinishing,
    },

    // Past the outage window: the run ends `error` (E_DATABASE_UNAVAILABLE). The executor heard at
    // once; the verdict asked for again is durable once the database is back.
    abandoned: { on: whileFinishing },

    done: { type: 'final' },
  },
});
