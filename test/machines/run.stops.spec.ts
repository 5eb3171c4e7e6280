// A run stopped before its end, at any point: in flight, during a write, while finishing.
import { expect } from 'chai';
import { CANCELLED_BY_REQUEST, type StepOutcome } from '../../machines/types.js';
import {
  deferred,
  execs,
  expectDone,
  expectEachRecordedOnce,
  finishCall,
  flush,
  type RunHarness,
  runInput,
  startRun,
  step,
  tracked,
  types,
} from './harness.js';

describe('run machine: cancel and executor lost', () => {
  const track = tracked<RunHarness>();

  describe('cancel', () => {
    it('cancels mid-step: run.cancel, in-flight and later steps E_CANCELLED, finishRun, then run.finished', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1), step(3, 1)])));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.actor.send({ type: 'CANCEL', reason: 'stopped by ann' });
      await flush();
      expect(types(h.calls).slice(4)).to.deep.equal(['sendRunCancel', 'finishRun', 'sendRunFinished']);
      expect(h.calls[4]).to.deep.equal({
        type: 'sendRunCancel',
        params: { runId: 'otr_1', reason: 'stopped by ann' },
      });
      const cancelled = (stepIndex: number): StepOutcome => ({
        stepIndex,
        status: 'skip',
        source: 'service',
        error: { code: 'E_CANCELLED', message: 'stopped by ann' },
      });
      const counts = { passed: 1, failed: 0, skipped: 3, total: 4 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [cancelled(1), cancelled(2), cancelled(3)],
        status: 'cancelled',
        reason: 'stopped by ann',
        counts,
      });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'cancelled', reason: 'stopped by ann', counts },
      });
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      expect(expectDone(h)).to.deep.equal({ status: 'cancelled', reason: 'stopped by ann', counts });
      expectEachRecordedOnce(h.calls, 4);
    });

    it('uses a default reason when CANCEL carries none', async () => {
      const h = track(startRun(runInput([step(0, 0)])));
      h.actor.send({ type: 'CANCEL' });
      await flush();
      expect(h.calls[2]).to.deep.equal({
        type: 'sendRunCancel',
        params: { runId: 'otr_1', reason: CANCELLED_BY_REQUEST },
      });
      expect(expectDone(h).reason).to.equal(CANCELLED_BY_REQUEST);
    });

    it('during a pending recordSteps: waits for the write, then cancels without sending the next step', async () => {
      const write = deferred();
      const steps = [step(0, 0), step(1, 0), step(2, 0)];
      const h = track(startRun(runInput(steps), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'user' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps']);

      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendRunCancel',
        'finishRun',
        'sendRunFinished',
      ]);
      expect(execs(h.calls), 'step 1 is never sent').to.deep.equal([0]);
      const finish = finishCall(h.calls);
      expect(finish.status).to.equal('cancelled');
      expect(finish.outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_CANCELLED'],
        [2, 'skip', 'E_CANCELLED'],
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'cancelled',
        reason: 'user',
        counts: { passed: 1, failed: 0, skipped: 2, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('does not re-record the skipped rest of an aborted case when cancelling', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1), step(3, 1)])));
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      h.actor.send({ type: 'CANCEL', reason: 'r' });
      await flush();
      expect(finishCall(h.calls).outcomes.map((o) => [o.stepIndex, o.error?.code])).to.deep.equal([
        [2, 'E_CANCELLED'],
        [3, 'E_CANCELLED'],
      ]);
      expectEachRecordedOnce(h.calls, 4);
      expect(expectDone(h).counts).to.deep.equal({ passed: 0, failed: 1, skipped: 3, total: 4 });
    });

    it('ignores CANCEL once the run is finishing', async () => {
      const finish = deferred();
      const h = track(startRun(runInput([step(0, 0)]), { finish: () => finish.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('finishing');
      h.actor.send({ type: 'CANCEL', reason: 'too late' });
      h.result({ stepIndex: 0, status: 'fail' });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      finish.resolve();
      await flush();
      expect(types(h.calls)).to.not.include('sendRunCancel');
      expect(expectDone(h).status).to.equal('passed');
    });
  });

  describe('executor lost', () => {
    it('records the in-flight step error and later ones skip with E_INTERNAL, finishes error, sends nothing', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'socket closed (1006)' });
      await flush();
      const lost = (stepIndex: number, status: 'error' | 'skip'): StepOutcome => ({
        stepIndex,
        status,
        source: 'service',
        error: { code: 'E_INTERNAL', message: 'socket closed (1006)' },
      });
      const counts = { passed: 1, failed: 1, skipped: 1, total: 3 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [lost(1, 'error'), lost(2, 'skip')],
        status: 'error',
        reason: 'socket closed (1006)',
        counts,
      });
      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'finishRun',
      ]);
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'socket closed (1006)', counts });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('during a pending write: waits for it, then the later steps skip with E_INTERNAL', async () => {
      const write = deferred();
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'heartbeat stopped' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps', 'finishRun']);
      const finish = finishCall(h.calls);
      expect(finish.outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_INTERNAL'],
        [2, 'skip', 'E_INTERNAL'],
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'error',
        reason: 'heartbeat stopped',
        counts: { passed: 1, failed: 0, skipped: 2, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('during a pending write (after a CANCEL): no step in flight, no run.cancel, no run.finished', async () => {
      const write = deferred();
      const h = track(startRun(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'user' });
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'gone' });
      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps', 'finishRun']);
      expect(finishCall(h.calls).outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_CANCELLED'],
      ]);
      // The CANCEL came first, so the run is cancelled; the executor is gone, so nothing is sent.
      expect(expectDone(h).status).to.equal('cancelled');
    });

    it('while finishing: no run.finished', async () => {
      const finish = deferred();
      const h = track(startRun(runInput([step(0, 0)]), { finish: () => finish.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'gone' });
      finish.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'finishRun']);
      expect(expectDone(h).status).to.equal('passed');
    });
  });
});
