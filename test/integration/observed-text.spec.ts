// Text an executor observed on a page is data: a step.result whose actual, error.message or console
// errors hold a NUL or a lone surrogate (a real page can hold both) keeps its verdict; the text is
// stored with U+FFFD in their place and the step says which fields (textReplaced), in GET
// /otp/runs/:id. Identifiers and structure in the same frame are still refused. A real WebSocket
// executor against a real service and PostgreSQL.
import { expect } from 'chai';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const NUL_MESSAGE = 'contains a NUL character (U+0000), which cannot be stored';

describe('OTP: observed text the database cannot hold', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  async function runOf(steps: number) {
    const { key } = await t.newProject('admin');
    const testCase = await t.request('POST', '/tests/cases', {
      key,
      body: {
        title: 'observed',
        steps: Array.from({ length: steps }, (_, i) => ({
          otp: { action: 'hover', locator: { by: 'testid', value: `s${i}` } },
          continueOnFail: true,
        })),
      },
    });
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello();
    const created = await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [testCase.body.id] } });
    return { key, executor, runId: created.body.runId as string };
  }

  it('keeps the verdict of each step, stores the text with U+FFFD and names the fields replaced', async () => {
    const { key, executor, runId } = await runOf(4);
    try {
      // Each result is answered by the next step.exec at once (before, it was refused and the step waited out its 30 s).
      executor.result(await executor.next('step.exec'), 'pass', { actual: 'a\u0000b' });
      executor.result(await executor.next('step.exec'), 'fail', {
        actual: '\udc00x',
        error: {
          code: 'E_ASSERT_FAILED',
          message: 'expected "ok", got "\ud800"',
          triedLocators: [{ by: 'testid', value: 's1', count: 0 }],
        },
        evidence: { consoleErrors: ['fine', 'n\u0000ul', 'cut \ud83d'] },
      });
      // Cleaned by the executor already (as otp-runner does): stored as it says.
      executor.result(await executor.next('step.exec'), 'pass', { actual: 'a\ufffd', textReplaced: ['actual'] });
      executor.result(await executor.next('step.exec'), 'error', { error: { code: 'E_INTERNAL', message: 'plain' } });
      const finished = await executor.next('run.finished');
      expect(finished.payload).to.deep.include({ status: 'failed', passed: 2, failed: 2, skipped: 0 });
      expect(executor.frames.filter((f) => f.type === 'error')).to.deep.equal([]);

      const run = await t.request('GET', `/otp/runs/${runId}`, { key });
      expect(run.status).to.equal(200);
      const [s0, s1, s2, s3] = run.body.steps;
      expect(s0).to.deep.include({ status: 'pass', source: 'executor', actual: 'a\ufffdb', textReplaced: ['actual'] });
      expect(s1).to.deep.include({
        status: 'fail',
        source: 'executor',
        actual: '\ufffdx',
        textReplaced: ['actual', 'error.message', 'evidence.consoleErrors'],
      });
      expect(s1.error).to.deep.equal({
        code: 'E_ASSERT_FAILED',
        message: 'expected "ok", got "\ufffd"',
        triedLocators: [{ by: 'testid', value: 's1', count: 0 }],
      });
      expect(s1.evidence).to.deep.equal({ consoleErrors: ['fine', 'n\ufffdul', 'cut \ufffd'] });
      expect(s2).to.deep.include({ status: 'pass', actual: 'a\ufffd', textReplaced: ['actual'] });
      expect(s3).to.deep.include({ status: 'error', textReplaced: null });
      expect(s3.error).to.deep.equal({ code: 'E_INTERNAL', message: 'plain' });
    } finally {
      executor.close();
    }
  });

  it("still refuses such text in what is not observed text (a locator, an error code), and takes the step's next result", async () => {
    const { key, executor, runId } = await runOf(1);
    try {
      const exec = await executor.next('step.exec');
      const locatorId = executor.result(exec, 'pass', {
        actual: 'a\u0000',
        usedLocator: { by: 'testid', value: 's\u0000' },
      });
      const locator = await executor.next('error', (f) => f.ref === locatorId);
      expect(locator.payload.code).to.equal('E_INVALID_FRAME');
      expect(locator.payload.details.fields).to.deep.equal([
        { field: 'payload.usedLocator.value', message: NUL_MESSAGE },
      ]);
      const codeId = executor.result(exec, 'fail', { error: { code: 'E_\u0000', message: 'm' } });
      const code = await executor.next('error', (f) => f.ref === codeId);
      expect(code.payload.details.fields).to.deep.equal([{ field: 'payload.error.code', message: NUL_MESSAGE }]);
      executor.result(exec, 'pass', { actual: 'ok\ud800' });
      expect((await executor.next('run.finished')).payload.status).to.equal('passed');
      const run = await t.request('GET', `/otp/runs/${runId}`, { key });
      expect(run.body.steps[0]).to.deep.include({ status: 'pass', actual: 'ok\ufffd', textReplaced: ['actual'] });
    } finally {
      executor.close();
    }
  });
});
