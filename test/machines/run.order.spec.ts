// run.start first, then one step.exec at a time, each after the previous outcome is durable.
import { expect } from 'chai';
import type { StepAction } from '../../machines/types.js';
import {
  click,
  deferred,
  execs,
  expectDone,
  expectEachRecordedOnce,
  finishCall,
  flush,
  type RunCall,
  type RunHarness,
  recordCalls,
  runInput,
  startRun,
  step,
  tracked,
  types,
} from './harness.js';

describe('run machine: order of frames and writes', () => {
  const track = tracked<RunHarness>();

  describe('sending steps in order', () => {
    it('sends run.start first, then one step at a time in order, each after the previous result is written', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
      expect(h.calls[0]).to.deep.equal({ type: 'sendRunStart', params: { runId: 'otr_1' } });
      expect(execs(h.calls)).to.deep.equal([0]);
      expect(h.actor.getSnapshot().value).to.equal('running');

      await flush();
      expect(execs(h.calls), 'still only step 0 in flight').to.deep.equal([0]);

      h.result({ stepIndex: 0, status: 'pass', durationMs: 12 });
      await flush();
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();

      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'finishRun',
        'sendRunFinished',
      ]);
      expect(execs(h.calls)).to.deep.equal([0, 1, 2]);
      expect(recordCalls(h.calls)).to.deep.equal([
        { runId: 'otr_1', outcomes: [{ stepIndex: 0, status: 'pass', durationMs: 12, source: 'executor' }] },
        { runId: 'otr_1', outcomes: [{ stepIndex: 1, status: 'pass', source: 'executor' }] },
      ]);
      const counts = { passed: 3, failed: 0, skipped: 0, total: 3 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [{ stepIndex: 2, status: 'pass', source: 'executor' }],
        status: 'passed',
        counts,
      });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'passed', counts },
      });
      expect(expectDone(h)).to.deep.equal({ status: 'passed', counts });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('does not send the next step until recordSteps has resolved', async () => {
      const write = deferred();
      const h = track(startRun(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      expect(execs(h.calls)).to.deep.equal([0]);
      write.resolve();
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      expect(h.actor.getSnapshot().value).to.equal('running');
    });

    it('puts the step fields into step.exec', () => {
      const h = track(
        startRun(runInput([step(0, 0, { timeoutMs: 5000, continueOnFail: true, label: 'Open', evidence: 'onFail' })])),
      );
      expect(h.calls[1]).to.deep.equal({
        type: 'sendStepExec',
        params: {
          stepIndex: 0,
          timeoutMs: 5000,
          continueOnFail: true,
          label: 'Open',
          evidence: 'onFail',
          step: click,
        },
      });
    });

    it('fills {{vars}} in nested locators of step.exec and leaves the planned step untouched', () => {
      const action: StepAction = {
        action: 'type',
        locator: { candidates: [{ css: '#{{field}}' }, { text: 'Log in as {{user}}' }] },
        text: '{{password}}',
        clear: true,
      };
      const h = track(
        startRun(
          runInput([step(0, 0, { action })], {
            vars: { field: 'pw', user: 'ann', password: 's3cret' },
          }),
        ),
      );
      const exec = h.calls[1] as Extract<RunCall, { type: 'sendStepExec' }>;
      expect(exec.params.step).to.deep.equal({
        action: 'type',
        locator: { candidates: [{ css: '#pw' }, { text: 'Log in as ann' }] },
        text: 's3cret',
        clear: true,
      });
      expect(action.text).to.equal('{{password}}');
    });

    it('requests no write before run.start, even when the first move of the run is a write', () => {
      // Checked as actor.start() returns, before any write is answered.
      const zeroSteps = track(startRun(runInput([])));
      expect(types(zeroSteps.calls)).to.deep.equal(['sendRunStart', 'finishRun']);
      zeroSteps.actor.stop();
      const allSkipped = track(
        startRun(
          runInput([step(0, 0, { action: { action: 'eval', script: 'x' } })], { capabilities: { eval: false } }),
        ),
      );
      expect(types(allSkipped.calls)).to.deep.equal(['sendRunStart', 'finishRun']);
      allSkipped.actor.stop();
      const leadingSkip = track(
        startRun(
          runInput([step(0, 0, { action: { action: 'eval', script: 'x' } }), step(1, 0)], {
            capabilities: { eval: false },
          }),
        ),
      );
      expect(types(leadingSkip.calls)).to.deep.equal(['sendRunStart', 'recordSteps']);
    });

    it('finishes a zero-step run as passed at once', async () => {
      const h = track(startRun(runInput([])));
      await flush();
      const counts = { passed: 0, failed: 0, skipped: 0, total: 0 };
      expect(h.calls).to.deep.equal([
        { type: 'sendRunStart', params: { runId: 'otr_1' } },
        { type: 'finishRun', params: { runId: 'otr_1', outcomes: [], status: 'passed', counts } },
        { type: 'sendRunFinished', params: { runId: 'otr_1', status: 'passed', counts } },
      ]);
      expect(expectDone(h)).to.deep.equal({ status: 'passed', counts });
    });
  });
});
