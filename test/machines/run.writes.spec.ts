// A write that fails, and the invariant over any run: each step's outcome is written exactly once.
import { expect } from 'chai';
import {
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
} from './harness.js';

describe('run machine: durable writes', () => {
  const track = tracked<RunHarness>();

  describe('write failures', () => {
    it('a rejected recordSteps ends the run as error; its batch and the rest go to finishRun', async () => {
      const h = track(
        startRun(runInput([step(0, 0), step(1, 0), step(2, 1)]), {
          record: () => Promise.reject(new Error('db down')),
        }),
      );
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls), 'nothing more is sent').to.deep.equal([0]);
      const finish = finishCall(h.calls);
      expect(finish.status).to.equal('error');
      expect(finish.reason).to.equal('db down');
      expect(finish.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'pass', source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_INTERNAL', message: 'run stopped: db down' },
        },
        {
          stepIndex: 2,
          status: 'skip',
          source: 'service',
          error: { code: 'E_INTERNAL', message: 'run stopped: db down' },
        },
      ]);
      const counts = { passed: 1, failed: 0, skipped: 2, total: 3 };
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'error', reason: 'db down', counts },
      });
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'db down', counts });
    });

    it('a rejected finishRun still ends the run, as error', async () => {
      const h = track(startRun(runInput([step(0, 0)]), { finish: () => Promise.reject(new Error('disk full')) }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      const counts = { passed: 1, failed: 0, skipped: 0, total: 1 };
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'disk full', counts });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'error', reason: 'disk full', counts },
      });
    });
  });

  describe('each step recorded exactly once', () => {
    it('holds over a long run mixing every path', async () => {
      const steps = [
        step(0, 0),
        step(1, 0, { action: { action: 'eval', script: 'x' } }), // capability skip
        step(2, 0, { continueOnFail: true, timeoutMs: 10 }), // times out, continues
        step(3, 0), // fails: 4 skipped
        step(4, 0),
        step(5, 1),
        step(6, 1, { action: { action: 'screenshot' } }),
        step(7, 2), // cancelled in flight
        step(8, 2),
      ];
      const h = track(startRun(runInput(steps, { capabilities: { eval: false, screenshot: true }, graceMs: 0 })));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.clock.increment(10);
      await flush();
      h.result({ stepIndex: 2, status: 'pass' }); // late: rejected
      h.result({ stepIndex: 3, status: 'fail' });
      await flush();
      h.result({ stepIndex: 5, status: 'pass' });
      await flush();
      h.result({ stepIndex: 6, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'enough' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2, 3, 5, 6, 7]);
      expectEachRecordedOnce(h.calls, 9);
      const summary = [...outcomeByIndex(h.calls).values()]
        .sort((a, b) => a.stepIndex - b.stepIndex)
        .map((o) => `${o.stepIndex}:${o.status}:${o.error?.code ?? '-'}`);
      expect(summary).to.deep.equal([
        '0:pass:-',
        '1:skip:E_CAPABILITY',
        '2:error:E_TIMEOUT',
        '3:fail:-',
        '4:skip:E_SKIPPED',
        '5:pass:-',
        '6:pass:-',
        '7:skip:E_CANCELLED',
        '8:skip:E_CANCELLED',
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'cancelled',
        reason: 'enough',
        counts: { passed: 3, failed: 2, skipped: 4, total: 9 },
      });
    });
  });
});
