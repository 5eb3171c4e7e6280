// The database goes away while a write waits: the run holds (nothing sent, no time-out) and goes on
// where it stopped when the write is answered; past the outage window it ends with its own code.
import { expect } from 'chai';
import {
  codeOf,
  type Deferred,
  deferred,
  execs,
  expectDone,
  flush,
  outcomeByIndex,
  type RunHarness,
  runInput,
  startRun,
  step,
  tracked,
  types,
  writes,
} from './harness.js';

const WINDOW = 5_000;

describe('run machine: database outages', () => {
  const track = tracked<RunHarness>();

  /** A run whose writes wait on promises the test settles, one per write in order. */
  function heldRun(stepCount: number, extra = {}) {
    const records: Deferred[] = [];
    const finishes: Deferred[] = [];
    const steps = [...Array(stepCount).keys()].map((i) => step(i, 0));
    const h = track(
      startRun(runInput(steps, { outageWindowMs: WINDOW, ...extra }), {
        record: () => {
          records.push(deferred());
          return records.at(-1)!.promise;
        },
        finish: () => {
          finishes.push(deferred());
          return finishes.at(-1)!.promise;
        },
      }),
    );
    return { h, records, finishes };
  }

  it('holds while the batch waits (no step sent, no time-out) and goes on with the next step once it is durable', async () => {
    const { h, records } = heldRun(3);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    expect(h.actor.getSnapshot().value).to.equal('held');
    // Longer than any step's time-out, shorter than the window: nothing happens.
    h.clock.increment(WINDOW - 1);
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('held');
    expect(execs(h.calls)).to.deep.equal([0]);
    records[0]!.resolve();
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('running');
    expect(execs(h.calls)).to.deep.equal([0, 1]);
    // The window's timer went with the state: past it, only step 1's own time-out has happened.
    h.clock.increment(WINDOW);
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('finishing');
    expect(codeOf(outcomeByIndex(h.calls).get(1))).to.deep.include({ code: 'E_TIMEOUT' });
    expect(types(h.calls)).to.not.include('sendRunFinished');
  });

  it('a CANCEL during the outage is acted on once the batch is durable', async () => {
    const { h, records, finishes } = heldRun(3);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    h.actor.send({ type: 'CANCEL', reason: 'stop it' });
    expect(h.actor.getSnapshot().value).to.equal('held');
    records[0]!.resolve();
    await flush();
    expect(types(h.calls)).to.include('sendRunCancel');
    finishes[0]!.resolve();
    await flush();
    expect(expectDone(h).status).to.equal('cancelled');
  });

  it('past the window: run.finished at once with error, the rest skipped with E_DATABASE_UNAVAILABLE, the verdict written when the database is back', async () => {
    const { h, records, finishes } = heldRun(3);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    h.clock.increment(WINDOW);
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('abandoned');
    const finished = h.calls.filter((call) => call.type === 'sendRunFinished');
    expect(finished).to.have.length(1);
    expect(finished[0]!.params).to.include({ status: 'error' });
    expect((finished[0]!.params as { reason: string }).reason).to.match(/database was unavailable for more than 5 s/);
    // The batch that waited goes with the verdict (the driver drops the write that waited).
    const byIndex = outcomeByIndex(h.calls);
    expect(codeOf(byIndex.get(0))).to.deep.equal({ status: 'pass', source: 'executor', code: undefined });
    expect(codeOf(byIndex.get(1))).to.deep.equal({ status: 'skip', source: 'service', code: 'E_DATABASE_UNAVAILABLE' });
    expect(codeOf(byIndex.get(2))).to.deep.equal({ status: 'skip', source: 'service', code: 'E_DATABASE_UNAVAILABLE' });
    expect(
      writes(h.calls)
        .at(-1)!
        .map((o) => o.stepIndex),
    ).to.deep.equal([0, 1, 2]);
    // A late answer of the write that waited changes nothing.
    records[0]!.resolve();
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('abandoned');
    finishes[0]!.resolve();
    await flush();
    expect(expectDone(h)).to.deep.include({ status: 'error' });
    expect(
      h.calls.filter((call) => call.type === 'sendRunFinished'),
      'run.finished is not sent twice',
    ).to.have.length(1);
  });

  it('the verdict waits for the database and is told once it is durable', async () => {
    const { h, finishes } = heldRun(1);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    expect(h.actor.getSnapshot().value).to.equal('finishHeld');
    h.clock.increment(WINDOW - 1);
    await flush();
    expect(types(h.calls)).to.not.include('sendRunFinished');
    finishes[0]!.resolve();
    await flush();
    expect(expectDone(h).status).to.equal('passed');
    expect(h.calls.filter((call) => call.type === 'sendRunFinished')).to.have.length(1);
  });

  it('a verdict that waits past the window becomes error for the database, told at once and written again', async () => {
    const { h, finishes } = heldRun(1);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    h.clock.increment(WINDOW);
    await flush();
    const finishRuns = h.calls.filter((call) => call.type === 'finishRun');
    expect(finishRuns.map((call) => (call.params as { status: string }).status)).to.deep.equal(['passed', 'error']);
    expect(
      h.calls
        .filter((call) => call.type === 'sendRunFinished')
        .map((call) => (call.params as { status: string }).status),
    ).to.deep.equal(['error']);
    finishes[1]!.resolve();
    await flush();
    expect(expectDone(h).status).to.equal('error');
    expect(h.calls.filter((call) => call.type === 'sendRunFinished')).to.have.length(1);
  });

  it('an executor lost during the outage is not told anything when the window passes', async () => {
    const { h, finishes } = heldRun(2);
    h.result({ stepIndex: 0, status: 'pass' });
    h.actor.send({ type: 'DB_UNAVAILABLE' });
    h.actor.send({ type: 'EXECUTOR_LOST', reason: 'socket closed' });
    h.clock.increment(WINDOW);
    await flush();
    expect(types(h.calls)).to.not.include('sendRunFinished');
    finishes[0]!.resolve();
    await flush();
    expect(expectDone(h).status).to.equal('error');
    expect(types(h.calls)).to.not.include('sendRunFinished');
  });
});
