// Retries: a test case whose attempt fails runs again from its first step, in a fresh context; its
// failed attempt is archived with the batch that decides the retry; a case that passes on a retry is
// flaky and does not fail the run.
import { expect } from 'chai';
import type { RunEffect } from '../../machines/types.js';
import { expectDone, flush, type RunHarness, runInput, startRun, step, tracked } from './harness.js';

type Exec = Extract<RunEffect, { type: 'sendStepExec' }>['payload'];

describe('run machine: retries', () => {
  const track = tracked<RunHarness>();
  const sent = (h: RunHarness) => h.calls.flatMap((c) => (c.type === 'sendStepExec' ? [c.params as Exec] : []));
  const records = (h: RunHarness) =>
    h.calls.flatMap((c) => (c.type === 'recordSteps' ? [c.params as Extract<RunEffect, { type: 'recordSteps' }>] : []));
  const lastSent = (h: RunHarness) => sent(h).at(-1)!;

  it('runs a failed case again from its first step, in a fresh context, and counts it flaky when it then passes', async () => {
    // Case 0: steps 0, 1; case 1: step 2. Case 0 may run once more.
    const h = track(startRun(runInput([step(0, 0), step(1, 0), step(2, 1)], { retries: [1, 0] })));
    h.result({ stepIndex: 0, status: 'pass' });
    await flush();
    h.result({ stepIndex: 1, status: 'fail', error: { code: 'E_ASSERT_FAILED', message: 'no' } });
    await flush();
    // The batch that ends the attempt carries the retry; then step 0 comes again, attempt 2.
    const retryBatch = records(h).at(-1)!;
    expect(retryBatch.retry).to.deep.equal({ caseIndex: 0, attempt: 2, stepIndexes: [0, 1] });
    expect(retryBatch.outcomes.map((o) => o.stepIndex)).to.deep.equal([1]);
    expect(lastSent(h)).to.deep.include({ stepIndex: 0, attempt: 2, freshContext: true });
    h.result({ stepIndex: 0, status: 'pass' });
    await flush();
    expect(lastSent(h)).to.deep.include({ stepIndex: 1, attempt: 2 });
    expect(lastSent(h).freshContext).to.equal(undefined);
    h.result({ stepIndex: 1, status: 'pass' });
    await flush();
    // Case 1 is a first attempt: no attempt member.
    expect(lastSent(h)).to.deep.include({ stepIndex: 2 });
    expect(lastSent(h).attempt).to.equal(undefined);
    h.result({ stepIndex: 2, status: 'pass' });
    await flush();
    const output = expectDone(h);
    expect(output).to.deep.equal({
      status: 'passed',
      counts: { passed: 3, failed: 0, skipped: 0, total: 3 },
      flaky: 1,
    });
  });

  it('fails the run when every attempt fails, and stops after the last retry', async () => {
    const h = track(startRun(runInput([step(0, 0)], { retries: [2] })));
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(lastSent(h).attempt).to.equal(attempt === 1 ? undefined : attempt);
      h.result({ stepIndex: 0, status: 'error', error: { code: 'E_LOCATOR_NOT_FOUND', message: 'gone' } });
      await flush();
    }
    expect(sent(h)).to.have.length(3);
    expect(expectDone(h)).to.deep.equal({
      status: 'failed',
      counts: { passed: 0, failed: 1, skipped: 0, total: 1 },
      flaky: 0,
    });
  });

  it('retries a case whose step timed out, and one cut short by a failure (its skipped rest archived with it)', async () => {
    const h = track(startRun(runInput([step(0, 0, { timeoutMs: 100 }), step(1, 0)], { retries: [1], graceMs: 0 })));
    h.clock.increment(100);
    await flush();
    const batch = records(h).at(-1)!;
    expect(batch.retry).to.deep.include({ caseIndex: 0, attempt: 2 });
    expect(batch.outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
      [0, 'error', 'E_TIMEOUT'],
      [1, 'skip', 'E_SKIPPED'],
    ]);
    expect(lastSent(h)).to.deep.include({ stepIndex: 0, attempt: 2, freshContext: true });
    h.result({ stepIndex: 0, status: 'pass' });
    await flush();
    h.result({ stepIndex: 1, status: 'pass' });
    await flush();
    expect(expectDone(h)).to.deep.include({ status: 'passed', flaky: 1 });
  });

  it('does not retry once a CANCEL is asked for', async () => {
    const h = track(startRun(runInput([step(0, 0)], { retries: [3] })));
    h.actor.send({ type: 'CANCEL' });
    await flush();
    expect(expectDone(h).status).to.equal('cancelled');
    expect(sent(h)).to.have.length(1);
  });

  it('a case without retries fails as before, next to one with retries', async () => {
    const h = track(startRun(runInput([step(0, 0), step(1, 1)], { retries: [0, 1] })));
    h.result({ stepIndex: 0, status: 'fail' });
    await flush();
    expect(records(h).at(-1)!.retry).to.equal(undefined);
    expect(lastSent(h)).to.deep.include({ stepIndex: 1 });
    h.result({ stepIndex: 1, status: 'pass' });
    await flush();
    expect(expectDone(h)).to.deep.include({ status: 'failed', flaky: 0 });
  });
});
