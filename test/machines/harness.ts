// The machine-test harness shared by the run and session machine specs.
//
// It starts the machine as src/ does (one machine, its emitted effects heard with `actor.on('*')`),
// under a SimulatedClock, logs every effect in order as a Call, and answers the durable writes
// through `answer` (machines/effects.ts), as src/ does: the test decides when and how each write
// settles by giving a function that returns its promise.
import { expect } from 'chai';
import { type Actor, createActor, type InspectionEvent, SimulatedClock } from 'xstate';
import { answer } from '../../machines/effects.js';
import { runMachine } from '../../machines/run.machine.js';
import { sessionMachine } from '../../machines/session.machine.js';
import type {
  PlannedStep,
  RunEffect,
  RunEvent,
  RunInput,
  SessionEffect,
  SessionEvent,
  SessionInput,
  StepAction,
  StepExecPayload,
  StepOutcome,
  StepReport,
} from '../../machines/types.js';

/** Lets every pending promise and its answer run. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An emitted effect as logged: its type and its data (a step.exec's payload; nothing for a ping). */
type CallOf<E extends { type: string }> = E extends { type: 'sendStepExec' }
  ? { type: E['type']; params: StepExecPayload }
  : E extends { type: 'sendPing' }
    ? { type: E['type'] }
    : { type: E['type']; params: Omit<E, 'type'> };

export type RunCall = CallOf<RunEffect>;
export type SessionCall = CallOf<SessionEffect>;

function toCall(effect: RunEffect | SessionEffect): RunCall | SessionCall {
  if (effect.type === 'sendStepExec') return { type: effect.type, params: effect.payload };
  if (effect.type === 'sendPing') return { type: effect.type };
  const { type, ...params } = effect;
  return { type, params } as RunCall | SessionCall;
}

/**
 * Logs every effect of `actor` and lets `answerWrite` answer the durable writes, then starts it
 * (the listener is in place before the first effect).
 */
function begin<E extends RunEffect | SessionEffect>(
  actor: {
    on(type: '*', handler: (effect: E) => void): unknown;
    subscribe(observer: { error: (error: unknown) => void }): unknown;
    start(): unknown;
  },
  answerWrite: (effect: E) => void,
): { calls: CallOf<E>[]; errors: unknown[] } {
  const calls: CallOf<E>[] = [];
  const errors: unknown[] = [];
  actor.on('*', (effect) => {
    calls.push(toCall(effect) as CallOf<E>);
    answerWrite(effect);
  });
  actor.subscribe({ error: (error) => errors.push(error) });
  actor.start();
  return { calls, errors };
}

interface Harness<A, C> {
  actor: A;
  /** Every effect, in the order the machine emitted it. */
  calls: C[];
  /** Errors the actor reported (none expected). */
  errors: unknown[];
  clock: SimulatedClock;
}

/**
 * Registers an afterEach that checks the tracked harness reported no actor error and stops it.
 * Call inside a describe; wrap each started harness in the returned `track`.
 */
export function tracked<H extends { actor: { stop(): unknown }; errors: unknown[] }>(): (h: H) => H {
  let current: H | undefined;
  afterEach(() => {
    if (current) {
      expect(current.errors, 'no actor errors').to.deep.equal([]);
      current.actor.stop();
      current = undefined;
    }
  });
  return (h) => (current = h);
}

// ---- Run machine ----

export interface RunWrites {
  /** Called for each recordSteps; the machine is answered when the returned promise settles. */
  record?: (effect: Extract<RunEffect, { type: 'recordSteps' }>) => Promise<void>;
  /** Called for the finishRun; the machine is answered when the returned promise settles. */
  finish?: (effect: Extract<RunEffect, { type: 'finishRun' }>) => Promise<void>;
}

export type RunHarness = Harness<Actor<typeof runMachine>, RunCall> & {
  result: (report: StepReport) => void;
};

/**
 * `inspect`: XState's inspection option, `created` sees the actor before it starts (a run tracer
 * follows it: src/otp/engine/run-tracer.ts); `clock`: the SimulatedClock to use.
 */
export interface RunHarnessOptions {
  clock?: SimulatedClock;
  inspect?: (event: InspectionEvent) => void;
  created?: (actor: Actor<typeof runMachine>) => void;
}

export function startRun(input: RunInput, writes: RunWrites = {}, options: RunHarnessOptions = {}): RunHarness {
  const clock = options.clock ?? new SimulatedClock();
  const actor = createActor(runMachine, { input, clock, ...(options.inspect ? { inspect: options.inspect } : {}) });
  options.created?.(actor);
  const send = (event: RunEvent) => actor.send(event);
  const { calls, errors } = begin<RunEffect>(actor, (effect) => {
    if (effect.type === 'recordSteps') {
      answer<RunEvent>(Promise.resolve(writes.record?.(effect)), send, { type: 'STEPS_RECORDED' }, (message) => ({
        type: 'STEPS_NOT_RECORDED',
        message,
      }));
    } else if (effect.type === 'finishRun') {
      answer<RunEvent>(Promise.resolve(writes.finish?.(effect)), send, { type: 'RUN_FINISH_WRITTEN' }, (message) => ({
        type: 'RUN_FINISH_FAILED',
        message,
      }));
    }
  });
  const result = (report: StepReport) => actor.send({ type: 'STEP_RESULT', report });
  return { actor, calls, errors, clock, result };
}

const click: StepAction = { action: 'click', locator: { css: '#go' } };

export { click };

export function step(
  stepIndex: number,
  caseIndex: number,
  options: Partial<Omit<PlannedStep, 'stepIndex' | 'caseIndex'>> = {},
): PlannedStep {
  return { stepIndex, caseIndex, action: click, timeoutMs: 1000, continueOnFail: false, ...options };
}

export function runInput(steps: PlannedStep[], extra: Partial<RunInput> = {}): RunInput {
  return { runId: 'otr_1', steps, capabilities: {}, vars: {}, graceMs: 200, ...extra };
}

type CallFor<T extends RunCall['type']> = Extract<RunCall, { type: T }>;

export const types = (calls: RunCall[]) => calls.map((call) => call.type);
export const execs = (calls: RunCall[]) =>
  calls.flatMap((call) => (call.type === 'sendStepExec' ? [call.params.stepIndex] : []));
/** The outcomes of each write (recordSteps and finishRun), in order. */
export const writes = (calls: RunCall[]) =>
  calls.flatMap((call) => (call.type === 'recordSteps' || call.type === 'finishRun' ? [call.params.outcomes] : []));
/** The one finishRun of the run. */
export const finishCall = (calls: RunCall[]) => {
  const found = calls.filter((call): call is CallFor<'finishRun'> => call.type === 'finishRun');
  expect(found).to.have.length(1);
  return found[0]!.params;
};
export const recordCalls = (calls: RunCall[]) =>
  calls.flatMap((call) => (call.type === 'recordSteps' ? [call.params] : []));

/** Each stepIndex was handed to exactly one write, and all of them were. */
export function expectEachRecordedOnce(calls: RunCall[], total: number) {
  const indexes = writes(calls)
    .flat()
    .map((outcome) => outcome.stepIndex)
    .sort((a, b) => a - b);
  expect(indexes).to.deep.equal([...Array(total).keys()]);
}

export function outcomeByIndex(calls: RunCall[]): Map<number, StepOutcome> {
  const map = new Map<number, StepOutcome>();
  for (const outcome of writes(calls).flat()) map.set(outcome.stepIndex, outcome);
  return map;
}

export function codeOf(outcome: StepOutcome | undefined) {
  return outcome && { status: outcome.status, source: outcome.source, code: outcome.error?.code };
}

export function expectDone(h: RunHarness) {
  const snapshot = h.actor.getSnapshot();
  expect(snapshot.status).to.equal('done');
  expect(snapshot.value).to.equal('done');
  return snapshot.output!;
}

// ---- Session machine ----

export interface SessionWrites {
  /** Called for the registerSession; the machine is answered when the returned promise settles. */
  register?: (effect: Extract<SessionEffect, { type: 'registerSession' }>) => Promise<void>;
}

export type SessionHarness = Harness<Actor<typeof sessionMachine>, SessionCall>;

export function startSession(input: SessionInput, writes: SessionWrites = {}): SessionHarness {
  const clock = new SimulatedClock();
  const actor = createActor(sessionMachine, { input, clock });
  const send = (event: SessionEvent) => actor.send(event);
  const { calls, errors } = begin<SessionEffect>(actor, (effect) => {
    if (effect.type === 'registerSession') {
      answer<SessionEvent>(
        Promise.resolve(writes.register?.(effect)),
        send,
        { type: 'SESSION_REGISTERED' },
        (message) => ({
          type: 'SESSION_NOT_REGISTERED',
          message,
        }),
      );
    }
  });
  return { actor, calls, errors, clock };
}
