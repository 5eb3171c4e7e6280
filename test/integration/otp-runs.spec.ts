import diagnostics from 'node:diagnostics_channel';
import { expect } from 'chai';
import type { RunClaimMessage, StepDispatchMessage } from '../../src/otp/engine/diagnostics.js';
import { RunStore } from '../../src/otp/store/run-store.js';
import { eventually } from '../support/eventually.js';
import { type Frame, TestExecutor } from '../support/executor.js';
import { insertOneStepRun } from '../support/queued-run.js';
import { startTestService, type TestService } from '../support/service.js';
import { describeEachTransport } from '../support/transports.js';

const locator = { by: 'role', value: 'button', name: 'Go' };
const step = (otp: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ otp, ...extra });

describeEachTransport('OTP: runs end to end', (transport) => {
  let t: TestService;
  before(async () => {
    // No resume window: a vanished executor's runs end at once (resuming is tested in otp-resume.spec.ts).
    t = await startTestService({ otp: { stepGraceMs: 100, resumeWindowMs: 0, transport } });
  });
  after(async () => t?.stop());

  /** Each test works in its own project, so that no other test's executor takes its runs. */
  async function project() {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const testCase = async (title: string, steps: unknown[]) =>
      (await req('POST', '/tests/cases', { title, steps })).body.id as string;
    const executor = async (capabilities: Record<string, unknown> = {}) => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      await e.hello(capabilities);
      return e;
    };
    return { key, req, testCase, executor };
  }

  it('runs two test cases: a failure under continueOnFail false skips the rest of its case, a capability skip is no failure', async () => {
    const p = await project();
    const caseA = await p.testCase('A', [
      step({ action: 'navigate', url: '{{base}}/login' }),
      step({ action: 'click', locator }),
      step({ action: 'type', locator: { by: 'label', value: 'Email' }, text: '{{user}}' }),
    ]);
    const caseB = await p.testCase('B', [
      step({ action: 'eval', script: 'return 1' }),
      step(
        {
          action: 'assert',
          kind: 'text',
          locator: { by: 'testid', value: 'greeting' },
          op: 'contains',
          expected: 'Hello {{user}}',
        },
        { label: 'greets', timeoutMs: 4000 },
      ),
    ]);
    const executor = await p.executor({ eval: false, screenshot: true, maxParallel: 1 });
    const created = await p.req('POST', '/otp/runs', {
      testCaseIds: [caseA, caseB],
      vars: { base: 'https://app.test', user: 'ada' },
    });
    expect(created.status).to.equal(202);
    expect(created.body.runId).to.match(/^otr_/);
    expect(['queued', 'running']).to.include(created.body.status);

    const start = await executor.next('run.start');
    expect(start.runId).to.equal(created.body.runId);
    expect(start.payload).to.deep.include({
      runId: created.body.runId,
      totalSteps: 5,
      vars: { base: 'https://app.test', user: 'ada' },
    });
    expect(start.payload.allowedOrigins).to.deep.equal(['https://app.test']);
    expect(start.payload.testCases).to.deep.equal([
      { id: caseA, title: 'A', steps: 3 },
      { id: caseB, title: 'B', steps: 2 },
    ]);
    expect(start.payload.defaults).to.deep.equal({ stepTimeoutMs: 30000 });
    executor.send('ack', undefined, { runId: start.runId, ref: start.id });

    const exec0 = await executor.next('step.exec');
    expect(exec0.payload).to.deep.include({ stepIndex: 0, timeoutMs: 30000, continueOnFail: false });
    expect(exec0.payload.step).to.deep.equal({ action: 'navigate', url: 'https://app.test/login' });
    executor.result(exec0, 'pass', { durationMs: 120 });

    const exec1 = await executor.next('step.exec');
    expect(exec1.payload.stepIndex).to.equal(1);
    executor.result(exec1, 'fail', {
      durationMs: 40,
      error: { code: 'E_LOCATOR_NOT_FOUND', message: 'no button Go', triedLocators: [locator] },
      evidence: { consoleErrors: ['TypeError: x is undefined'] },
    });

    // Step 2 (rest of case A) is skipped, step 3 (eval, declared false) is skipped: step 4 comes next.
    const exec4 = await executor.next('step.exec');
    expect(exec4.payload).to.deep.include({ stepIndex: 4, label: 'greets', timeoutMs: 4000 });
    expect(exec4.payload.step.expected).to.equal('Hello ada');
    executor.result(exec4, 'pass', { actual: 'Hello ada!', usedLocator: { by: 'testid', value: 'greeting' } });

    const finished = await executor.next('run.finished');
    expect(finished.payload).to.deep.include({
      runId: created.body.runId,
      status: 'failed',
      passed: 2,
      failed: 1,
      skipped: 2,
      total: 5,
    });
    expect(finished.payload.durationMs).to.be.a('number');

    const run = await p.req('GET', `/otp/runs/${created.body.runId}`);
    expect(run.body.status).to.equal('failed');
    expect(run.body.counts).to.deep.equal({ passed: 2, failed: 1, skipped: 2, total: 5 });
    const steps = run.body.steps;
    expect(steps.map((s: { status: string }) => s.status)).to.deep.equal(['pass', 'fail', 'skip', 'skip', 'pass']);
    expect(steps[0].durationMs).to.equal(120);
    expect(steps[1].error).to.deep.equal({
      code: 'E_LOCATOR_NOT_FOUND',
      message: 'no button Go',
      triedLocators: [locator],
    });
    expect(steps[1].evidence).to.deep.equal({ consoleErrors: ['TypeError: x is undefined'] });
    expect(steps[2].error.code).to.equal('E_SKIPPED');
    expect(steps[3].error.code).to.equal('E_CAPABILITY');
    expect(steps[4]).to.deep.include({
      actual: 'Hello ada!',
      usedLocator: { by: 'testid', value: 'greeting' },
      label: 'greets',
    });
    executor.close();
  });

  it('records a step with no result in time as E_TIMEOUT and refuses its late result', async () => {
    const p = await project();
    const id = await p.testCase('slow', [
      step({ action: 'click', locator }, { timeoutMs: 200 }),
      step({ action: 'hover', locator }),
    ]);
    const executor = await p.executor();
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
    const exec0 = await executor.next('step.exec');
    const finished = await executor.next('run.finished', () => true, 3000);
    expect(finished.payload).to.deep.include({ status: 'failed', passed: 0, failed: 1, skipped: 1 });
    const lateId = executor.result(exec0, 'pass');
    const refusal = await executor.next('error');
    expect(refusal.payload.code).to.equal('E_UNEXPECTED');
    expect(refusal.ref).to.equal(lateId);
    const run = await p.req('GET', `/otp/runs/${created.body.runId}`);
    expect(run.body.steps[0]).to.deep.include({ status: 'error', source: 'service' });
    expect(run.body.steps[0].error.code).to.equal('E_TIMEOUT');
    expect(run.body.steps[1].status).to.equal('skip');
    executor.close();
  });

  it('publishes its dispatch latency on the otp:step.dispatch diagnostics channel, once per step.exec that follows a result', async () => {
    const p = await project();
    const id = await p.testCase('measured', [
      step({ action: 'click', locator }),
      step({ action: 'hover', locator }),
      step({ action: 'click', locator }),
    ]);
    const executor = await p.executor();
    const seen: StepDispatchMessage[] = [];
    const listen = (message: unknown) => void seen.push(message as StepDispatchMessage);
    diagnostics.subscribe('otp:step.dispatch', listen);
    try {
      const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
      const runId = created.body.runId as string;
      const exec0 = await executor.next('step.exec');
      // A stray result is refused and measures nothing.
      executor.result({ ...exec0, payload: { ...exec0.payload, stepIndex: 2 } }, 'pass');
      await executor.next('error');
      executor.result(exec0, 'pass');
      executor.result(await executor.next('step.exec'), 'pass');
      executor.result(await executor.next('step.exec'), 'pass');
      await executor.next('run.finished');
      const mine = seen.filter((m) => m.runId === runId);
      // The first step.exec answers no result; the last result leads to run.finished, not a step.exec.
      expect(mine.map((m) => m.stepIndex)).to.deep.equal([1, 2]);
      for (const m of mine) expect(m.ms).to.be.a('number').and.be.greaterThan(0).and.lessThan(10_000);
    } finally {
      diagnostics.unsubscribe('otp:step.dispatch', listen);
      executor.close();
    }
  });

  it('cancels a run mid-step: run.cancel, the step in flight and the rest E_CANCELLED, run.finished cancelled', async () => {
    const p = await project();
    const id = await p.testCase('long', [
      step({ action: 'click', locator }),
      step({ action: 'wait', ms: 10 }),
      step({ action: 'hover', locator }),
    ]);
    const executor = await p.executor();
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
    const exec0 = await executor.next('step.exec');
    executor.result(exec0, 'pass');
    await executor.next('step.exec');
    const cancelled = await p.req('POST', `/otp/runs/${created.body.runId}/cancel`);
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
    const cancel = await executor.next('run.cancel');
    expect(cancel.runId).to.equal(created.body.runId);
    const finished = await executor.next('run.finished');
    expect(finished.payload).to.deep.include({ status: 'cancelled', passed: 1, failed: 0, skipped: 2 });
    expect(cancelled.body.steps.map((s: { status: string }) => s.status)).to.deep.equal(['pass', 'skip', 'skip']);
    expect(cancelled.body.steps.slice(1).map((s: { error: { code: string } }) => s.error.code)).to.deep.equal([
      'E_CANCELLED',
      'E_CANCELLED',
    ]);
    const again = await p.req('POST', `/otp/runs/${created.body.runId}/cancel`);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('CONFLICT');
    executor.close();
  });

  it('cancels a queued run at once', async () => {
    const p = await project();
    const id = await p.testCase('never', [step({ action: 'click', locator })]);
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
    const cancelled = await p.req('POST', `/otp/runs/${created.body.runId}/cancel`);
    expect(cancelled.body).to.deep.include({
      status: 'cancelled',
      counts: { passed: 0, failed: 0, skipped: 1, total: 1 },
    });
    expect(cancelled.body.steps[0].error.code).to.equal('E_CANCELLED');
  });

  it('finishes the run as error when the executor vanishes mid-run, keeping what it reported', async () => {
    const p = await project();
    const id = await p.testCase('vanish', [
      step({ action: 'click', locator }),
      step({ action: 'hover', locator }),
      step({ action: 'check', locator }),
    ]);
    const executor = await p.executor();
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
    executor.result(await executor.next('step.exec'), 'pass', { actual: 'kept' });
    await executor.next('step.exec');
    executor.terminate();
    const run = await eventually(async () => {
      const r = await p.req('GET', `/otp/runs/${created.body.runId}`);
      expect(r.body.status).to.equal('error');
      return r.body;
    });
    expect(run.steps[0]).to.deep.include({ status: 'pass', actual: 'kept', source: 'executor' });
    expect(run.steps[1].status).to.equal('error');
    expect(run.steps[1].error.code).to.equal('E_INTERNAL');
    expect(run.steps[2].status).to.equal('skip');
    expect(run.counts).to.deep.equal({ passed: 1, failed: 1, skipped: 1, total: 3 });
  });

  it('keeps a run queued until an executor of the project connects', async () => {
    const p = await project();
    const id = await p.testCase('waiting', [step({ action: 'click', locator })]);
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id] });
    // The safety net behind notices looks for the runs a session of this process may claim: none may.
    await t.service.engine.reconcile();
    const queued = await p.req('GET', `/otp/runs/${created.body.runId}`);
    expect(queued.body.status).to.equal('queued');
    // POST answers the run as inserted, built without reading it back: what GET answers while it
    // waits, but for where it stands in the queue, which is GET's to say.
    const { queue, ...waiting } = queued.body;
    expect(created.body).to.deep.equal(waiting);
    expect(queue.position).to.equal(0);
    const executor = await p.executor();
    const start = await executor.next('run.start');
    expect(start.runId).to.equal(created.body.runId);
    expect((await p.req('GET', `/otp/runs/${created.body.runId}`)).body).to.include({
      status: 'running',
      sessionId: executor.sessionId,
    });
    executor.result(await executor.next('step.exec'), 'pass');
    expect((await executor.next('run.finished')).payload.status).to.equal('passed');
    executor.close();
  });

  it('respects maxParallel: a session holds at most that many runs, the next waits', async () => {
    const p = await project();
    const id = await p.testCase('parallel', [step({ action: 'click', locator })]);
    const executor = await p.executor({ maxParallel: 2 });
    const posted = [];
    for (let i = 0; i < 3; i++) posted.push((await p.req('POST', '/otp/runs', { testCaseIds: [id] })).body);
    // A run that finds room on a session here is inserted claimed by it and starts at once: POST says so.
    expect(posted.map((r) => [r.status, r.sessionId])).to.deep.equal([
      ['running', executor.sessionId],
      ['running', executor.sessionId],
      ['queued', null],
    ]);
    const runs = posted.map((r) => r.runId as string);
    const first = await executor.next('step.exec');
    const second = await executor.next('step.exec');
    expect(new Set([first.runId, second.runId]).size).to.equal(2);
    // Every claim a session of this process may make is made (and done) before the reconcile
    // resolves: the session is full, so the third run waits.
    await t.service.engine.reconcile();
    // Two runs started, the third did not.
    expect(executor.frames.filter((f: Frame) => f.type === 'run.start')).to.have.length(2);
    const statuses = await Promise.all(runs.map(async (r) => (await p.req('GET', `/otp/runs/${r}`)).body.status));
    expect(statuses.filter((s) => s === 'running')).to.have.length(2);
    expect(statuses.filter((s) => s === 'queued')).to.have.length(1);
    executor.result(first, 'pass');
    const third = await executor.next('step.exec');
    expect([first.runId, second.runId]).not.to.include(third.runId);
    executor.result(second, 'pass');
    executor.result(third, 'pass');
    for (let i = 0; i < 3; i++) expect((await executor.next('run.finished')).payload.status).to.equal('passed');
    executor.close();
  });

  it('queues a new run behind the runs already waiting for its session, even when the session has room', async () => {
    const { key, projectId, tenantId } = await t.newProject('admin');
    const id = (
      await t.request('POST', '/tests/cases', {
        key,
        body: { title: 'order', steps: [step({ action: 'click', locator })] },
      })
    ).body.id;
    // The claim a session makes as it becomes ready (it finds nothing): the waiting run below must come
    // after it, or that claim would take it and nothing would be waiting when the new run is posted.
    const claims: RunClaimMessage[] = [];
    const listen = (m: unknown) => claims.push(m as RunClaimMessage);
    diagnostics.subscribe('otp:run.claim', listen);
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ maxParallel: 2 });
    await eventually(async () => expect(claims.some((c) => c.sessionId === executor.sessionId)).to.equal(true));
    diagnostics.unsubscribe('otp:run.claim', listen);
    // A run that waits in the queue for this session, written behind the engine's back (nothing wakes a claim).
    const waiting = await insertOneStepRun(new RunStore(t.service.db), {
      tenantId,
      projectId,
      requestedSessionId: executor.sessionId!,
      testCaseId: id,
      action: { action: 'click', locator },
    });
    const created = await t.request('POST', '/otp/runs', {
      key,
      body: { testCaseIds: [id], sessionId: executor.sessionId },
    });
    expect(created.body).to.include({ status: 'queued', sessionId: null });
    // The claim its POST asked for takes the queue in order: the one that waited first.
    expect((await executor.next('run.start')).runId).to.equal(waiting);
    expect((await executor.next('run.start')).runId).to.equal(created.body.runId);
    executor.close();
  });

  it("asks PostgreSQL for queued runs at a run's end only when one may wait for its session", async () => {
    const p = await project();
    const id = await p.testCase('claims', [step({ action: 'click', locator })]);
    const claims: RunClaimMessage[] = [];
    const channel = diagnostics.channel('otp:run.claim');
    const listen = (m: unknown) => claims.push(m as RunClaimMessage);
    channel.subscribe(listen);
    try {
      const executor = await p.executor({ maxParallel: 1 });
      const mine = () => claims.filter((c) => c.sessionId === executor.sessionId).map((c) => c.claimed);
      // Ready: one claim, which finds the queue empty.
      await eventually(async () => expect(mine()).to.deep.equal([0]));
      const runOnce = async (expected: 'running' | 'queued') => {
        const posted = (await p.req('POST', '/otp/runs', { testCaseIds: [id] })).body;
        expect(posted.status).to.equal(expected);
        return posted.runId as string;
      };
      const finish = async (runId: string) => {
        expect((await executor.next('run.start')).runId).to.equal(runId);
        executor.result(await executor.next('step.exec'), 'pass');
        expect((await executor.next('run.finished')).payload.status).to.equal('passed');
      };
      // Runs that start from their POST end without a claim. A POST that finds room comes after the
      // end of the run before it, and after any claim that end began (a POST waits for it).
      await finish(await runOnce('running'));
      const second = await runOnce('running');
      expect(mine(), 'no claim after a run no queued run waited behind').to.deep.equal([0]);
      // A run queued behind it (maxParallel 1): the end claims it, and the next end looks again.
      const queued = await runOnce('queued');
      await finish(second);
      await finish(queued);
      await eventually(async () => expect(mine()).to.deep.equal([0, 1, 0]));
      await finish(await runOnce('running'));
      const last = await runOnce('running');
      expect(mine(), 'the queue found empty once more: no claim').to.deep.equal([0, 1, 0]);
      await finish(last);
      executor.close();
    } finally {
      channel.unsubscribe(listen);
    }
  });

  it("asks PostgreSQL nothing as a new session is welcomed once a claim found its project's queue dry, and asks again once none of the project's sessions is left", async () => {
    const { key, projectId, tenantId } = await t.newProject('admin');
    const id = (
      await t.request('POST', '/tests/cases', {
        key,
        body: { title: 'dry', steps: [step({ action: 'click', locator })] },
      })
    ).body.id;
    const claims: RunClaimMessage[] = [];
    const channel = diagnostics.channel('otp:run.claim');
    const listen = (m: unknown) => claims.push(m as RunClaimMessage);
    channel.subscribe(listen);
    const claimsOf = (e: TestExecutor) => claims.filter((c) => c.sessionId === e.sessionId).map((c) => c.claimed);
    const executor = async () => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      await e.hello({ maxParallel: 1 });
      return e;
    };
    try {
      const first = await executor();
      await eventually(async () => expect(claimsOf(first)).to.deep.equal([0]));
      const second = await executor();
      // A POST for the second session waits for any claim of it in flight (Dispatch.reserve), so a
      // claim made as it was welcomed would be counted by the time the run starts.
      const pinned = await t.request('POST', '/otp/runs', {
        key,
        body: { testCaseIds: [id], sessionId: second.sessionId },
      });
      expect(pinned.body.status).to.equal('running');
      expect((await second.next('run.start')).runId).to.equal(pinned.body.runId);
      expect(claimsOf(second), 'no claim for the new session').to.deep.equal([]);
      second.result(await second.next('step.exec'), 'pass');
      expect((await second.next('run.finished')).payload.status).to.equal('passed');
      first.close();
      second.close();
      await eventually(async () => {
        const open = await t.service.db('otp_sessions').where({ project_id: projectId, status: 'open' }).count();
        expect(Number(open[0]!.count)).to.equal(0);
      });
      // Queued while no session of the project was here, behind the engine's back (no notice): the
      // next session of the project claims it as it is welcomed.
      const waiting = await insertOneStepRun(new RunStore(t.service.db), {
        tenantId,
        projectId,
        testCaseId: id,
        action: { action: 'click', locator },
      });
      const third = await executor();
      expect((await third.next('run.start')).runId).to.equal(waiting);
      expect(claimsOf(third)).to.deep.equal([1]);
      third.close();
    } finally {
      channel.unsubscribe(listen);
    }
  });

  it('sends a run with a sessionId to that session only', async () => {
    const p = await project();
    const id = await p.testCase('pinned', [step({ action: 'click', locator })]);
    const a = await p.executor({ maxParallel: 4 });
    const b = await p.executor({ maxParallel: 1 });
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [id], sessionId: b.sessionId });
    const start = await b.next('run.start');
    expect(start.runId).to.equal(created.body.runId);
    expect(a.frames.filter((f) => f.type === 'run.start')).to.have.length(0);
    const unknown = await p.req('POST', '/otp/runs', { testCaseIds: [id], sessionId: 'ots_nope' });
    expect(unknown.status).to.equal(404);
    a.close();
    b.close();
  });
});
