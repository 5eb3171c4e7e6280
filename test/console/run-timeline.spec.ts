// The run's one time line, read from its trace (src/console/run-timeline.ts): frames where the trace
// says the machine sent them, writes where they were answered, each step's times, and the two
// comparisons of the compare page. Every trace here is produced by running the real run machine under
// a SimulatedClock, recorded by the driver's own tracer (src/otp/engine/run-tracer.ts).
import { expect } from 'chai';
import { SimulatedClock } from 'xstate';
import type { RunEvent, RunInput, StepReport } from '../../machines/types.js';
import { firstPathDifference, firstStepDifference } from '../../src/console/pages/compare.js';
import { runTimeline } from '../../src/console/run-timeline.js';
import { RunTracer } from '../../src/otp/engine/run-tracer.js';
import type { TraceEntry } from '../../src/otp/store/run-trace.js';
import { type Deferred, deferred, flush, runInput, startRun, step } from '../machines/harness.js';

const T0 = Date.UTC(2026, 10, 25, 10, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** A run of the real machine whose trace is recorded; every write waits until `answer` settles it. */
function tracedRun(input: RunInput) {
  const clock = new SimulatedClock();
  const tracer = new RunTracer(
    input.runId,
    () => {},
    () => T0 + clock.now(),
  );
  const writes: Deferred[] = [];
  const write = () => {
    const d = deferred();
    writes.push(d);
    return d.promise;
  };
  const h = startRun(
    input,
    { record: write, finish: write },
    { clock, inspect: tracer.inspect, created: (actor) => tracer.follow(actor) },
  );
  return {
    /** Lets `ms` pass (delays due fire), then sends `event`, if any. */
    after: async (ms: number, event?: RunEvent) => {
      clock.increment(ms);
      if (event) h.actor.send(event);
      await flush();
    },
    result: (ms: number, report: StepReport) => {
      clock.increment(ms);
      h.result(report);
    },
    /** Lets `ms` pass, then the oldest write waiting becomes durable. */
    answer: async (ms: number) => {
      clock.increment(ms);
      writes.shift()!.resolve();
      await flush();
    },
    trace: () => tracer.snapshot(),
    status: () => h.actor.getSnapshot().status,
  };
}

/** One step passes, the next is skipped by the service (its capability is false), the last times out. */
async function skipAndTimeout() {
  const steps = [step(0, 0), step(1, 0, { action: { action: 'eval', script: '1' } }), step(2, 0)];
  const run = tracedRun(runInput(steps, { capabilities: { eval: false } }));
  run.result(40, { stepIndex: 0, status: 'pass' });
  await run.answer(3);
  // The step's time-out: its timeoutMs (1000) and the grace (200).
  await run.after(1200);
  await run.answer(7);
  expect(run.status()).to.equal('done');
  return run.trace().transitions;
}

const frameRows = (rows: ReturnType<typeof runTimeline>['rows']) => rows.filter((r) => r.frame).map((r) => r.text);

describe('Console: the run time line read from the trace', () => {
  let trace: TraceEntry[];
  before(async () => {
    trace = await skipAndTimeout();
  });

  it('puts each frame and write beside the transition that sent, received or answered it', () => {
    const { rows } = runTimeline({ transitions: trace, dropped: 0 }, { totalSteps: 3 });
    expect(rows.map((r) => `${r.t}:${r.kind}:${r.text}`)).to.deep.equal([
      '0:transition:xstate.init',
      '0:out:run.start: 3 steps',
      '1:transition:always',
      '1:out:step.exec of step 1',
      '2:in:step.result of step 1',
      '2:transition:STEP_RESULT',
      '2:service:decided by the service: step 2',
      '3:write:durable: steps 1–2',
      '3:transition:STEPS_RECORDED',
      '3:out:step.exec of step 3',
      '4:transition:after stepTimeout',
      '4:service:decided by the service: timed out; step 3',
      '5:transition:always',
      '6:write:durable: the verdict and step 3',
      '6:transition:RUN_FINISH_WRITTEN',
      '6:out:run.finished',
    ]);
  });

  it('gives each step the transitions of its frames: the gap from its result to the next step.exec shows', () => {
    const { steps } = runTimeline({ transitions: trace, dropped: 0 }, { totalSteps: 3 });
    expect(steps.get(0)).to.deep.include({
      exec: { t: 1, at: at(0) },
      decided: { t: 2, at: at(40), by: 'executor' },
      written: { t: 3, at: at(43) },
      next: { t: 3, at: at(43) },
    });
    expect(steps.get(1)).to.deep.include({
      decided: { t: 2, at: at(40), by: 'service' },
      written: { t: 3, at: at(43) },
    });
    expect(steps.get(1)!.exec).to.equal(undefined);
    expect(steps.get(2)).to.deep.include({
      exec: { t: 3, at: at(43) },
      decided: { t: 4, at: at(1243), by: 'service' },
      written: { t: 6, at: at(1250) },
    });
  });

  it("numbers transitions from the run's start when older ones were dropped, and sends no run.finished to a lost executor", async () => {
    const run = tracedRun(runInput(Array.from({ length: 6 }, (_, i) => step(i, 0))));
    for (let i = 0; i < 4; i++) {
      run.result(5, { stepIndex: i, status: 'pass' });
      await run.answer(1);
    }
    await run.after(4, { type: 'EXECUTOR_LOST', reason: 'executor connection lost (1006)' });
    await run.answer(3);
    const whole = run.trace().transitions;
    // The window a store keeps may start late: here, at the write before step 5 was sent.
    const from = whole.findIndex((e) => e.event === 'STEPS_RECORDED' && e.cursor === 4);
    const lost = runTimeline({ transitions: whole.slice(from), dropped: from }, { totalSteps: 6 });
    expect(lost.rows.filter((r) => r.kind === 'transition').map((r) => [r.t, r.text])).to.deep.equal([
      [from, 'STEPS_RECORDED'],
      [from + 1, 'EXECUTOR_LOST'],
      [from + 2, 'RUN_FINISH_WRITTEN'],
    ]);
    expect(frameRows(lost.rows)).to.deep.equal(['step.exec of step 5']);
    expect(lost.steps.get(4)!.exec).to.deep.equal({ t: from, at: whole[from]!.at });
    expect(lost.rows.map((r) => r.text)).to.include('decided by the service: steps 5–6');
  });

  it('sends neither run.cancel nor run.finished when the executor is lost while a write is in flight', async () => {
    const run = tracedRun(runInput([step(0, 0), step(1, 0)]));
    run.result(5, { stepIndex: 0, status: 'pass' });
    // A loss during the write changes no state: it is acted on once the write is answered.
    await run.after(1, { type: 'EXECUTOR_LOST', reason: 'executor connection lost (1006)' });
    await run.answer(2);
    await run.answer(2);
    const { rows } = runTimeline(run.trace(), { totalSteps: 2 });
    expect(rows.filter((r) => r.kind === 'transition').map((r) => r.text)).to.deep.equal([
      'xstate.init',
      'always',
      'STEP_RESULT',
      'STEPS_RECORDED',
      'RUN_FINISH_WRITTEN',
    ]);
    expect(frameRows(rows)).to.deep.equal(['run.start: 2 steps', 'step.exec of step 1', 'step.result of step 1']);
  });

  it('says run.cancel where the machine sends it, and leaves steps unnumbered in a trace without cursors', async () => {
    const run = tracedRun(runInput([step(0, 0), step(1, 0)]));
    await run.after(1, { type: 'CANCEL' });
    await run.answer(1);
    // As a trace written before the cursor was recorded.
    const transitions = run.trace().transitions.map(({ cursor: _cursor, ...entry }) => entry);
    const cancelled = runTimeline({ transitions, dropped: 0 }, { totalSteps: 2 });
    expect(frameRows(cancelled.rows)).to.deep.equal(['run.start: 2 steps', 'step.exec', 'run.cancel', 'run.finished']);
    expect(cancelled.steps.size).to.equal(0);
  });

  it('tells run.finished once, as the outage window passes, when the verdict waits for the database', async () => {
    const run = tracedRun(runInput([step(0, 0)], { outageWindowMs: 500 }));
    run.result(5, { stepIndex: 0, status: 'pass' });
    await run.after(1, { type: 'DB_UNAVAILABLE' });
    await run.after(500);
    await run.answer(1);
    const { rows } = runTimeline(run.trace(), { totalSteps: 1 });
    expect(rows.filter((r) => r.kind !== 'service').map((r) => `${r.kind}:${r.text}`)).to.deep.equal([
      'transition:xstate.init',
      'out:run.start: 1 step',
      'transition:always',
      'out:step.exec of step 1',
      'in:step.result of step 1',
      'transition:STEP_RESULT',
      'write:the database is unavailable: the write waits for it',
      'transition:DB_UNAVAILABLE',
      'transition:after outageWindow',
      'out:run.finished',
      'write:durable: the verdict and step 1',
      'transition:RUN_FINISH_WRITTEN',
    ]);
  });

  it('finds the first step and the first transition where two runs part', () => {
    const step = (stepIndex: number, status: string, code?: string) =>
      ({
        stepIndex,
        status,
        action: { action: 'click' },
        durationMs: 1,
        label: null,
        error: code ? { code } : null,
      }) as never;
    expect(firstStepDifference([step(0, 'pass'), step(1, 'pass')], [step(0, 'pass'), step(1, 'fail', 'E_X')])).to.equal(
      1,
    );
    expect(firstStepDifference([step(0, 'fail', 'E_A')], [step(0, 'fail', 'E_B')])).to.equal(0);
    expect(firstStepDifference([step(0, 'pass')], [step(0, 'pass')])).to.equal(undefined);
    expect(firstStepDifference([step(0, 'pass')], [step(0, 'pass'), step(1, 'pass')])).to.equal(1);
    expect(firstPathDifference(trace, trace)).to.equal(undefined);
    const parted: TraceEntry = { at: at(50), event: 'STEP_RESULT', from: 'running', to: 'finishing', cursor: 3 };
    expect(firstPathDifference(trace, [...trace.slice(0, 4), parted])).to.equal(4);
  });
});
