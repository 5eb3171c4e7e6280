// A step.result that never comes (time-out) and one that is not for the step in flight.

import { expect } from 'chai';
import { closeUndriven } from '../../machines/run.steps.js';
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
  recordCalls,
  runInput,
  startRun,
  step,
  tracked,
  types,
  writes,
} from './harness.js';

describe('run machine: missing and stray results', () => {
  const track = tracked<RunHarness>();

  describe('step time-out', () => {
    it('records E_TIMEOUT at exactly timeoutMs + grace, not a millisecond before', async () => {
      const h = track(startRun(runInput([step(0, 0, { timeoutMs: 1000 }), step(1, 0), step(2, 1)], { graceMs: 250 })));
      h.clock.increment(1249);
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
      expect(h.actor.getSnapshot().value).to.equal('running');

      h.clock.increment(1);
      await flush();
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        {
          stepIndex: 0,
          status: 'error',
          source: 'service',
          error: {
            code: 'E_TIMEOUT',
            message: 'no step.result within 1000 ms (+250 ms grace, 1250 ms in all)',
          },
        },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 1 (stepIndex 0) of the same test case did not pass' },
        },
      ]);
      expect(execs(h.calls), 'the time-out failed case 0; case 1 runs').to.deep.equal([0, 2]);

      // The executor answers late: refused, nothing changes.
      const before = h.actor.getSnapshot();
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      expect(h.actor.getSnapshot().context).to.deep.equal(before.context);

      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 1, failed: 1, skipped: 1, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('uses each step’s own timeoutMs and restarts the timer for every step', async () => {
      const h = track(
        startRun(
          runInput([step(0, 0, { timeoutMs: 100, continueOnFail: true }), step(1, 0, { timeoutMs: 5000 })], {
            graceMs: 10,
          }),
        ),
      );
      h.clock.increment(110);
      await flush();
      expect(execs(h.calls), 'timed-out step with continueOnFail true: next one is sent').to.deep.equal([0, 1]);
      h.clock.increment(5009);
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('running');
      h.clock.increment(1);
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 0, failed: 2, skipped: 0, total: 2 },
      });
      expect(finishCall(h.calls).outcomes.map(codeOf)).to.deep.equal([
        { status: 'error', source: 'service', code: 'E_TIMEOUT' },
      ]);
    });

    it('a result before the time-out cancels the timer', async () => {
      const h = track(
        startRun(runInput([step(0, 0, { timeoutMs: 100 }), step(1, 0, { timeoutMs: 100 })], { graceMs: 0 })),
      );
      h.clock.increment(99);
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.clock.increment(99);
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('running');
      expect(writes(h.calls).flat().map(codeOf)).to.deep.equal([
        { status: 'pass', source: 'executor', code: undefined },
      ]);
    });
  });

  describe('stray step.result', () => {
    it('rejects results for steps not in flight and leaves the run unchanged', async () => {
      const h = track(startRun(runInput([step(0, 0, { timeoutMs: 100 }), step(1, 0), step(2, 0)], { graceMs: 0 })));
      h.clock.increment(50);
      const before = h.actor.getSnapshot();
      h.result({ stepIndex: 1, status: 'pass' });
      h.result({ stepIndex: 99, status: 'pass' });
      await flush();
      expect(h.calls.slice(2)).to.deep.equal([
        {
          type: 'rejectStepResult',
          params: { stepIndex: 1, reason: 'step 1 is not in flight (step 0 is)' },
        },
        { type: 'rejectStepResult', params: { stepIndex: 99, reason: 'no step 99 in this run' } },
      ]);
      expect(h.actor.getSnapshot().value).to.equal('running');
      expect(h.actor.getSnapshot().context).to.deep.equal(before.context);
      // The stray results did not restart the time-out of step 0.
      h.clock.increment(50);
      await flush();
      expect(codeOf(outcomeByIndex(h.calls).get(0))).to.deep.equal({
        status: 'error',
        source: 'service',
        code: 'E_TIMEOUT',
      });
    });

    it('rejects a duplicate result, including one arriving while the first is being written', async () => {
      const write = deferred();
      const h = track(startRun(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      write.resolve();
      await flush();
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      expect(outcomeByIndex(h.calls).get(0)!.status).to.equal('pass');
      expect(execs(h.calls)).to.deep.equal([0, 1]);
    });

    it('rejects a result for a step already skipped with its test case', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      h.result({ stepIndex: 1, status: 'pass' });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 1, reason: 'step 1 already has a result' },
      });
    });
  });
});

describe('closeUndriven: the end of a run no machine drives', () => {
  it('skips every unreported step with the code given, keeps the reported ones, and counts all as a driven run does', () => {
    const { outcomes, counts } = closeUndriven(
      [
        { stepIndex: 0, status: 'pass' },
        { stepIndex: 1, status: 'error' },
        { stepIndex: 2, status: 'pending' },
        { stepIndex: 3, status: 'skip' },
        { stepIndex: 4, status: 'pending' },
      ],
      5,
      'E_CANCELLED',
      'cancelled by request',
    );
    expect(outcomes).to.deep.equal([
      {
        stepIndex: 2,
        status: 'skip',
        source: 'service',
        error: { code: 'E_CANCELLED', message: 'cancelled by request' },
      },
      {
        stepIndex: 4,
        status: 'skip',
        source: 'service',
        error: { code: 'E_CANCELLED', message: 'cancelled by request' },
      },
    ]);
    expect(counts).to.deep.equal({ total: 5, passed: 1, failed: 1, skipped: 3 });
  });

  it('ends a run without steps with nothing counted', () => {
    expect(closeUndriven([], 0, 'E_INTERNAL', 'gone')).to.deep.equal({
      outcomes: [],
      counts: { total: 0, passed: 0, failed: 0, skipped: 0 },
    });
  });
});
