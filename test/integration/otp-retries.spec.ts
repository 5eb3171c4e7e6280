// Retries end to end: a test case that fails runs again on the same session (step.exec attempt 2,
// freshContext on its first step); a case that passes on a retry is flaky and the run passes; the
// failed attempt stays readable (earlierAttempts) and run.finished counts the flaky case.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { describeEachTransport } from '../support/transports.js';

const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };

describeEachTransport('OTP: retries of failed test cases', (transport) => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100, resumeWindowMs: 0, transport } });
  });
  after(async () => t?.stop());

  async function setUp() {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ maxParallel: 1 });
    return { key, req, executor };
  }

  it('runs a failed case again from its first step and calls it flaky when it then passes; the run passes', async () => {
    const { key, req, executor } = await setUp();
    const flaky = (await req('POST', '/tests/cases', { title: 'flaky', steps: [click, click] })).body.id;
    const steady = (await req('POST', '/tests/cases', { title: 'steady', steps: [click] })).body.id;
    const created = await req('POST', '/otp/runs', { testCaseIds: [flaky, steady], retries: 2 });
    expect(created.status, JSON.stringify(created.body)).to.equal(202);
    const runId = created.body.runId;
    const start = await executor.next('run.start');
    expect(start.payload.testCases.map((c: { retries?: number }) => c.retries)).to.deep.equal([2, 2]);
    executor.send('ack', undefined, { runId, ref: start.id });

    const execs: Array<{ stepIndex: number; attempt?: number; freshContext?: boolean }> = [];
    const answer = async (status: 'pass' | 'fail') => {
      const exec = await executor.next('step.exec');
      execs.push({
        stepIndex: exec.payload.stepIndex,
        attempt: exec.payload.attempt,
        freshContext: exec.payload.freshContext,
      });
      const error = status === 'fail' ? { code: 'E_ASSERT_FAILED', message: 'expected 3 items, got 2' } : undefined;
      executor.send(
        'step.result',
        { stepIndex: exec.payload.stepIndex, status, durationMs: 5, ...(error ? { error } : {}) },
        { runId, ref: exec.id },
      );
    };
    await answer('pass'); // flaky, attempt 1, step 0
    await answer('fail'); // step 1 fails: the case runs again
    await answer('pass'); // attempt 2, step 0
    await answer('pass'); // attempt 2, step 1
    await answer('pass'); // steady
    const finished = await executor.next('run.finished');
    expect(finished.payload).to.deep.include({ status: 'passed', passed: 3, failed: 0, flaky: 1 });
    expect(execs).to.deep.equal([
      { stepIndex: 0, attempt: undefined, freshContext: undefined },
      { stepIndex: 1, attempt: undefined, freshContext: undefined },
      { stepIndex: 0, attempt: 2, freshContext: true },
      { stepIndex: 1, attempt: 2, freshContext: undefined },
      { stepIndex: 2, attempt: undefined, freshContext: undefined },
    ]);

    const run = (await req('GET', `/otp/runs/${runId}`)).body;
    expect(run.status).to.equal('passed');
    expect(run.counts).to.deep.equal({ passed: 3, failed: 0, skipped: 0, total: 3, flaky: 1 });
    expect(run.steps.map((s: { attempt: number; status: string }) => [s.attempt, s.status])).to.deep.equal([
      [2, 'pass'],
      [2, 'pass'],
      [1, 'pass'],
    ]);
    expect(
      run.earlierAttempts.map(
        (a: { stepIndex: number; attempt: number; status: string; error: { code: string } | null }) => [
          a.stepIndex,
          a.attempt,
          a.status,
          a.error?.code ?? null,
        ],
      ),
    ).to.deep.equal([
      [0, 1, 'pass', null],
      [1, 1, 'fail', 'E_ASSERT_FAILED'],
    ]);
    // The reports say so too: JUnit's flakyFailure for the failed attempt, CTRF's flaky and retryAttempts.
    const report = (format: string) =>
      fetch(`${t.api}/otp/runs/${runId}?format=${format}`, { headers: { authorization: `Bearer ${key}` } });
    const junit = { text: await (await report('junit')).text() };
    expect(junit.text).to.match(
      /<testcase[^>]*name="flaky"[^>]*>[\s\S]*<flakyFailure[^>]*message="expected 3 items, got 2"[^>]*type="E_ASSERT_FAILED"/,
    );
    expect(junit.text).to.not.match(/<failure/);
    const ctrf = await (await report('ctrf')).json();
    const test = ctrf.results.tests.find((x: { name: string }) => x.name === 'flaky');
    expect(test).to.deep.include({ status: 'passed', flaky: true, retries: 1 });
    expect(test.retryAttempts).to.have.length(1);
    expect(ctrf.results.summary.flaky).to.equal(1);
  });

  it('fails the run when the last attempt fails too, and a plan sets the default', async () => {
    const { req, executor } = await setUp();
    const broken = (await req('POST', '/tests/cases', { title: 'broken', steps: [click] })).body.id;
    const plan = (await req('POST', '/tests/plans', { title: 'nightly', testCaseIds: [broken], retries: 1 })).body.id;
    const runId = (await req('POST', '/otp/runs', { planId: plan })).body.runId;
    const start = await executor.next('run.start');
    executor.send('ack', undefined, { runId, ref: start.id });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const exec = await executor.next('step.exec');
      expect(exec.payload.attempt).to.equal(attempt === 1 ? undefined : attempt);
      executor.send(
        'step.result',
        { stepIndex: 0, status: 'error', error: { code: 'E_LOCATOR_NOT_FOUND', message: 'nothing matched' } },
        { runId, ref: exec.id },
      );
    }
    const finished = await executor.next('run.finished');
    expect(finished.payload).to.deep.include({ status: 'failed', failed: 1, flaky: 0 });
    const run = (await req('GET', `/otp/runs/${runId}`)).body;
    expect(run.counts).to.deep.include({ failed: 1, flaky: 0 });
    expect(run.earlierAttempts).to.have.length(1);
  });

  it("records a flaky case's test result as flaky, and the test run counts it", async () => {
    const { req, executor } = await setUp();
    const caseId = (await req('POST', '/tests/cases', { title: 'wobbly', steps: [click] })).body.id;
    const testRun = (await req('POST', '/tests/runs', { title: 'nightly', testCaseIds: [caseId] })).body.id;
    const runId = (await req('POST', '/otp/runs', { testCaseIds: [caseId], retries: 1, testRunId: testRun })).body
      .runId;
    const start = await executor.next('run.start');
    executor.send('ack', undefined, { runId, ref: start.id });
    for (const status of ['fail', 'pass'] as const) {
      const exec = await executor.next('step.exec');
      executor.send(
        'step.result',
        {
          stepIndex: 0,
          status,
          ...(status === 'fail' ? { error: { code: 'E_ASSERT_FAILED', message: 'not yet' } } : {}),
        },
        { runId, ref: exec.id },
      );
    }
    expect((await executor.next('run.finished')).payload).to.deep.include({ status: 'passed', flaky: 1 });
    const results = await eventually(async () => {
      const page = (await req('GET', `/tests/results?testRunId=${testRun}`)).body;
      expect(page.items).to.have.length(1);
      return page.items;
    });
    expect(results[0].status).to.equal('flaky');
    expect((await req('GET', `/tests/runs/${testRun}`)).body.summary).to.deep.include({
      flaky: 1,
      passed: 0,
      failed: 0,
    });
  });

  it('refuses more than 3 retries, and a run without retries answers as before', async () => {
    const { req } = await setUp();
    const id = (await req('POST', '/tests/cases', { title: 'x', steps: [click] })).body.id;
    const refused = await req('POST', '/otp/runs', { testCaseIds: [id], retries: 4 });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('VALIDATION_ERROR');
    const plain = await req('POST', '/otp/runs', { testCaseIds: [id] });
    expect(plain.body.counts).to.not.have.property('flaky');
    expect(plain.body).to.not.have.property('earlierAttempts');
  });
});
