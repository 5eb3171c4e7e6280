import { createRequire } from 'node:module';
import { expect } from 'chai';
import { type AnyTransitionDefinition, createActor, fromCallback, type InspectionEvent, SimulatedClock } from 'xstate';
import { runMachine } from '../../machines/run.machine.js';
import { sessionMachine } from '../../machines/session.machine.js';
import {
  cancelAllByIds,
  delayedEventIds,
  eventLabel,
  fastInspection,
  shareOptions,
  stopChildActor,
  transitionsOf,
  XSTATE_VERIFIED,
} from '../../src/otp/engine/xstate-adapter.js';
import { runInput, step } from '../machines/harness.js';

type Microstep = Extract<InspectionEvent, { type: '@xstate.microstep' }>;
const label = (t: AnyTransitionDefinition) =>
  `${t.eventType || 'always'}:${t.source.path.join('.')}>${t.target?.[0]?.path.join('.') ?? ''}`;

/**
 * Drives a run of three steps (a pass, a time-out, a failure that ends it) and lists the
 * transitions of every microstep the trace is handed.
 */
function traceOf(fast: boolean): { transitions: string[]; patched: boolean } {
  const transitions: string[] = [];
  const traced = (event: Microstep) => transitions.push(...transitionsOf(event).map(label));
  const clock = new SimulatedClock();
  const actor = createActor(runMachine, {
    input: runInput([step(0, 0), step(1, 0, { continueOnFail: true }), step(2, 0)]),
    clock,
    inspect: (event) => {
      if (event.type === '@xstate.microstep') traced(event);
    },
  });
  const patched = fast && fastInspection(actor, traced);
  actor.on('recordSteps', () => actor.send({ type: 'STEPS_RECORDED' }));
  actor.on('finishRun', () => actor.send({ type: 'RUN_FINISH_WRITTEN' }));
  actor.start();
  actor.send({ type: 'STEP_RESULT', report: { stepIndex: 0, status: 'pass' } });
  clock.increment(1_200);
  actor.send({ type: 'STEP_RESULT', report: { stepIndex: 2, status: 'fail' } });
  expect(actor.getSnapshot().status).to.equal('done');
  return { transitions, patched };
}

// The XState internals the service relies on (src/otp/engine/xstate-adapter.ts): each is checked here
// against the installed XState, so that a release that changes one fails this file and nothing else.
describe("The XState adapter: what the service needs beyond XState's documented API", () => {
  it('runs on an XState version the adapter was checked against (pinned exactly in package.json)', () => {
    const installed = (createRequire(import.meta.url)('xstate/package.json') as { version: string }).version;
    expect(XSTATE_VERIFIED).to.include(installed);
  });

  it('names delayed and eventless transitions as the trace shows them', () => {
    const labels = new Set<string>();
    const actor = createActor(runMachine, { input: runInput([step(0, 0)]), clock: new SimulatedClock() });
    for (const node of Object.values(actor.logic.states))
      for (const t of node.transitions.values()) for (const d of t) labels.add(eventLabel(d));
    expect([...labels]).to.include('after stepTimeout');
  });

  it("still finds XState's inspection sender to replace", () => {
    // When this fails, an XState upgrade moved its internal: the trace still works through
    // `inspect`, but every step pays again for the inspection events nobody reads.
    expect(traceOf(true).patched).to.equal(true);
  });

  it('hands the trace the same transitions as XState inspection, eventless and delayed ones included', () => {
    const plain = traceOf(false).transitions;
    expect(traceOf(true).transitions).to.deep.equal(plain);
    expect(plain).to.include.members([
      'always:advancing>running',
      'STEP_RESULT:running>recording',
      'STEPS_RECORDED:recording>running',
    ]);
    expect(plain.some((t) => t.startsWith('xstate.after.stepTimeout'))).to.equal(true);
    expect(plain.at(-1)).to.equal('RUN_FINISH_WRITTEN:finishing>done');
  });

  it('stops an actor that has a parent (stop() refuses one), its delayed events cancelled by their ids', () => {
    const clock = new SimulatedClock();
    const root = createActor(
      fromCallback(() => {}),
      { clock },
    );
    root.start();
    const ids = delayedEventIds(sessionMachine.root);
    expect(ids.some((id) => id.startsWith('xstate.after.helloTimeout'))).to.equal(true);
    cancelAllByIds(root.system, ids);
    const input = {
      keepaliveMs: 1000,
      pongTimeoutMs: 1000,
      helloTimeoutMs: 1000,
      maxInvalidFrames: 3,
      resumeWindowMs: 0,
    };
    const child = createActor(sessionMachine, { input, parent: root });
    const effects: string[] = [];
    child.on('*', (effect) => effects.push(effect.type));
    child.start();
    // The hello time-out is scheduled in the shared system, under the child's session id.
    const scheduled = () => Object.keys(root.system.getSnapshot()._scheduledEvents);
    expect(scheduled()).to.have.length(1);
    expect(() => child.stop()).to.throw(/non-root/);
    stopChildActor(child);
    expect(scheduled()).to.deep.equal([]);
    clock.increment(5_000);
    // Stopped: its hello time-out never fired (no closeSocket effect).
    expect(effects).to.deep.equal([]);
    // It is the replaced cancelAll that cancels: given no ids, a stopped actor's time-out stays scheduled.
    cancelAllByIds(root.system, []);
    const other = createActor(sessionMachine, { input, parent: root });
    other.start();
    stopChildActor(other);
    expect(scheduled()).to.have.length(1);
  });

  it('lets actors created with the same options share one resolved options object, which start still reads', () => {
    const clock = new SimulatedClock();
    const root = createActor(
      fromCallback(() => {}),
      { clock },
    );
    root.start();
    const input = {
      keepaliveMs: 1000,
      pongTimeoutMs: 1000,
      helloTimeoutMs: 700,
      maxInvalidFrames: 3,
      resumeWindowMs: 0,
    };
    const first = createActor(sessionMachine, { input, parent: root });
    const second = createActor(sessionMachine, { input, parent: root });
    // XState keeps the caller's options among its own (the input is what start reads).
    expect(first.options).to.include({ input, parent: root });
    expect(second.options).to.not.equal(first.options);
    const shared = shareOptions(first, undefined);
    expect(shared).to.equal(first.options);
    expect(shareOptions(second, shared)).to.equal(shared);
    expect(second.options).to.equal(shared);
    // Other options (another input) are not shared.
    const otherInput = { ...input, helloTimeoutMs: 300 };
    const third = createActor(sessionMachine, { input: otherInput, parent: root });
    expect(shareOptions(third, shared)).to.equal(third.options).and.not.equal(shared);
    const closed: number[] = [];
    for (const actor of [second, third]) {
      actor.on('closeSocket', (effect) => closed.push(effect.code));
      actor.start();
    }
    // Each started from its own input: the shorter hello time-out fires first, the shared one's at 700 ms.
    expect(second.getSnapshot().context.helloTimeoutMs).to.equal(700);
    clock.increment(300);
    expect(closed).to.have.length(1);
    clock.increment(400);
    expect(closed).to.have.length(2);
    for (const actor of [first, second, third]) stopChildActor(actor);
  });
});
