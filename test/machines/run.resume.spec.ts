// The run machine while its session is detached: nothing is sent, no time-out runs; on resume the
// step in flight is sent again with its time-out started over. And a run taken over from another
// process (input.recorded) goes on from its first step without an outcome.
import { expect } from 'chai';
import {
  codeOf,
  deferred,
  execs,
  expectDone,
  expectEachRecordedOnce,
  finishCall,
  flush,
  outcomeByIndex,
  type RunHarness,
  runInput,
  startRun,
  step,
  tracked,
  types,
} from './harness.js';

describe('run machine: detached and resumed', () => {
  const track = tracked<RunHarness>();

  it('pauses the step in flight: no time-out while detached, the same step again on resume with a full time-out', async () => {
    const h = track(startRun(runInput([step(0, 0), step(1, 0)])));
    expect(execs(h.calls)).to.deep.equal([0]);
    h.clock.increment(900);
    h.actor.send({ type: 'EXECUTOR_DETACHED' });
    expect(h.actor.getSnapshot().value).to.equal('paused');
    h.clock.increment(60_000);
    expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
    h.actor.send({ type: 'EXECUTOR_RESUMED' });
    expect(execs(h.calls)).to.deep.equal([0, 0]);
    expect(h.calls[1]).to.deep.equal(h.calls[2]);
    // timeoutMs 1000 + grace 200, counted from the resume.
    h.clock.increment(1_199);
    expect(h.actor.getSnapshot().value).to.equal('running');
    h.clock.increment(1);
    await flush();
    expect(codeOf(outcomeByIndex(h.calls).get(0))).to.deep.equal({
      status: 'error',
      source: 'service',
      code: 'E_TIMEOUT',
    });
  });

  it('a write answered while detached leads to paused; the next step goes out on resume only', async () => {
    const write = deferred();
    const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 0)]), { record: () => write.promise }));
    h.result({ stepIndex: 0, status: 'pass' });
    expect(h.actor.getSnapshot().value).to.equal('recording');
    h.actor.send({ type: 'EXECUTOR_DETACHED' });
    write.resolve();
    await flush();
    expect(h.actor.getSnapshot().value).to.equal('paused');
    expect(execs(h.calls)).to.deep.equal([0]);
    h.actor.send({ type: 'EXECUTOR_RESUMED' });
    expect(execs(h.calls)).to.deep.equal([0, 1]);
    h.result({ stepIndex: 1, status: 'pass' });
    await flush();
    h.result({ stepIndex: 2, status: 'pass' });
    await flush();
    expect(expectDone(h).status).to.equal('passed');
    expectEachRecordedOnce(h.calls, 3);
  });

  it('cancel while paused: the step at the cursor and the rest E_CANCELLED, run.cancel and run.finished emitted (the session holds them)', async () => {
    const h = track(startRun(runInput([step(0, 0), step(1, 0)])));
    h.actor.send({ type: 'EXECUTOR_DETACHED' });
    h.actor.send({ type: 'CANCEL', reason: 'stop' });
    await flush();
    expect(types(h.calls)).to.deep.equal([
      'sendRunStart',
      'sendStepExec',
      'sendRunCancel',
      'finishRun',
      'sendRunFinished',
    ]);
    expect(finishCall(h.calls).outcomes.map((o) => o.error?.code)).to.deep.equal(['E_CANCELLED', 'E_CANCELLED']);
    expect(expectDone(h).status).to.equal('cancelled');
  });

  it('executor lost while paused (the window ended): the step at the cursor error, the rest skip, E_INTERNAL', async () => {
    const h = track(startRun(runInput([step(0, 0), step(1, 0)])));
    h.actor.send({ type: 'EXECUTOR_DETACHED' });
    h.actor.send({ type: 'EXECUTOR_LOST', reason: 'not resumed' });
    await flush();
    const outcomes = finishCall(h.calls).outcomes;
    expect(outcomes.map((o) => [o.status, o.error?.code])).to.deep.equal([
      ['error', 'E_INTERNAL'],
      ['skip', 'E_INTERNAL'],
    ]);
    expect(types(h.calls)).to.not.include('sendRunFinished');
    expect(expectDone(h)).to.deep.include({ status: 'error', reason: 'not resumed' });
  });

  it('takes over a run from its recorded outcomes: run.start again, then the first step without an outcome', async () => {
    const steps = [step(0, 0), step(1, 0), step(2, 1), step(3, 1), step(4, 2)];
    const h = track(
      startRun(
        runInput(steps, {
          recorded: [
            { stepIndex: 0, status: 'pass', source: 'executor' },
            { stepIndex: 1, status: 'pass', source: 'executor' },
            // Case 1 was cut short by a failure: its later step was skipped with it.
            { stepIndex: 2, status: 'fail', source: 'executor' },
            { stepIndex: 3, status: 'skip', source: 'service', error: { code: 'E_SKIPPED', message: 'x' } },
          ],
        }),
      ),
    );
    expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
    expect(execs(h.calls)).to.deep.equal([4]);
    h.result({ stepIndex: 4, status: 'pass' });
    await flush();
    expect(finishCall(h.calls).outcomes.map((o) => o.stepIndex)).to.deep.equal([4]);
    expect(expectDone(h)).to.deep.equal({ status: 'failed', counts: { passed: 3, failed: 1, skipped: 1, total: 5 } });
  });

  it('a run started on a detached session (claimed as the socket dropped) starts paused: run.start only, the step on resume', () => {
    const h = track(startRun(runInput([step(0, 0)], { detached: true })));
    expect(types(h.calls)).to.deep.equal(['sendRunStart']);
    expect(h.actor.getSnapshot().value).to.equal('paused');
    h.clock.increment(60_000);
    h.actor.send({ type: 'EXECUTOR_RESUMED' });
    expect(execs(h.calls)).to.deep.equal([0]);
  });
});
