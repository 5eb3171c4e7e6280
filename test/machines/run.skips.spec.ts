// Steps decided without the executor: a capability declared false, and the rest of a test case cut short by a failure.
import { expect } from 'chai';
import type { Capabilities } from '../../machines/types.js';
import {
  codeOf,
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
} from './harness.js';

describe('run machine: steps not sent', () => {
  const track = tracked<RunHarness>();

  describe('capability skips', () => {
    it('skips a step whose capability is declared false with E_CAPABILITY, without failing the run', async () => {
      const capabilities: Capabilities = { eval: false, upload: false };
      const steps = [
        step(0, 0),
        step(1, 0, { action: { action: 'eval', script: '1' } }),
        // screenshot is not mentioned in capabilities: unknown, so it is sent.
        step(2, 0, { action: { action: 'screenshot', fullPage: true } }),
        step(3, 0, { action: { action: 'upload', locator: { css: 'input' }, assetId: 'ast_1' } }),
      ];
      const h = track(startRun(runInput(steps, { capabilities })));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'pass', source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_CAPABILITY', message: 'the executor declared capability eval false' },
        },
      ]);
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(execs(h.calls), 'the upload step is never sent').to.deep.equal([0, 2]);
      const finish = finishCall(h.calls);
      expect(finish.outcomes.map(codeOf)).to.deep.equal([
        { status: 'pass', source: 'executor', code: undefined },
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
      expect(finish.status).to.equal('passed');
      expect(expectDone(h)).to.deep.equal({
        status: 'passed',
        counts: { passed: 2, failed: 0, skipped: 2, total: 4 },
      });
      expectEachRecordedOnce(h.calls, 4);
    });

    it('writes a leading capability skip after run.start and before the first step.exec', async () => {
      const h = track(
        startRun(
          runInput([step(0, 0, { action: { action: 'upload', locator: 'input', assetId: 'ast_1' } }), step(1, 0)], {
            capabilities: { upload: false },
          }),
        ),
      );
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'recordSteps']);
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'recordSteps', 'sendStepExec']);
      expect(execs(h.calls)).to.deep.equal([1]);
      expect(recordCalls(h.calls)[0]!.outcomes.map(codeOf)).to.deep.equal([
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
    });

    it('sends a step when its capability is declared true', () => {
      const h = track(
        startRun(runInput([step(0, 0, { action: { action: 'eval', script: '1' } })], { capabilities: { eval: true } })),
      );
      expect(execs(h.calls)).to.deep.equal([0]);
    });

    it('finishes without sending anything when every step is capability-skipped', async () => {
      const h = track(
        startRun(
          runInput([step(0, 0, { action: { action: 'eval', script: 'x' } })], { capabilities: { eval: false } }),
        ),
      );
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'finishRun', 'sendRunFinished']);
      expect(finishCall(h.calls).outcomes.map(codeOf)).to.deep.equal([
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
      expect(expectDone(h).status).to.equal('passed');
    });
  });

  describe('failures and continueOnFail', () => {
    it('skips the rest of a failed test case with E_SKIPPED in one write, then starts the next case', async () => {
      const steps = [step(0, 0), step(1, 0), step(2, 0), step(3, 1), step(4, 1)];
      const h = track(startRun(runInput(steps)));
      const failure = { code: 'E_LOCATOR_NOT_FOUND', message: 'no #go', triedLocators: [{ css: '#go' }] };
      h.result({ stepIndex: 0, status: 'fail', error: failure });
      await flush();
      expect(recordCalls(h.calls)).to.have.length(1);
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'fail', error: failure, source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 1 (stepIndex 0) of the same test case did not pass' },
        },
        {
          stepIndex: 2,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 1 (stepIndex 0) of the same test case did not pass' },
        },
      ]);
      expect(execs(h.calls), 'case 2 still runs').to.deep.equal([0, 3]);
      h.result({ stepIndex: 3, status: 'pass' });
      await flush();
      h.result({ stepIndex: 4, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 3, 4]);
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 1, skipped: 2, total: 5 },
      });
      expectEachRecordedOnce(h.calls, 5);
    });

    it('treats an executor error like a failure', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'error', error: { code: 'E_INTERNAL', message: 'crash' } });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      expect(codeOf(outcomeByIndex(h.calls).get(1))).to.deep.equal({
        status: 'skip',
        source: 'service',
        code: 'E_SKIPPED',
      });
    });

    it('goes on with the next step when continueOnFail is true', async () => {
      const h = track(startRun(runInput([step(0, 0, { continueOnFail: true }), step(1, 0), step(2, 0)])));
      h.result({ stepIndex: 0, status: 'fail', error: { code: 'E_ASSERT_FAILED', message: 'no' } });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 1, skipped: 0, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('records an executor skip as-is and does not count it as a failure', async () => {
      const h = track(startRun(runInput([step(0, 0), step(1, 0)])));
      h.result({ stepIndex: 0, status: 'skip' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'passed',
        counts: { passed: 1, failed: 0, skipped: 1, total: 2 },
      });
    });

    it('counts pass, fail + error and skip over a mixed run', async () => {
      const steps = [
        step(0, 0, { continueOnFail: true }),
        step(1, 0, { continueOnFail: true }),
        step(2, 0, { continueOnFail: true }),
        step(3, 0, { continueOnFail: true }),
        step(4, 1),
      ];
      const h = track(startRun(runInput(steps)));
      const statuses = ['pass', 'fail', 'error', 'skip', 'pass'] as const;
      for (const [stepIndex, status] of statuses.entries()) {
        h.result({ stepIndex, status });
        await flush();
      }
      expect(execs(h.calls)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 2, skipped: 1, total: 5 },
      });
    });
  });
});
