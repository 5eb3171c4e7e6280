import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';

describe('the example executor in docs/examples', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  it('completes a run by following docs/protocol.md alone', async () => {
    const { key } = await t.newProject('write');
    const testCase = await t.request('POST', '/tests/cases', {
      key,
      body: {
        title: 'example',
        steps: [
          { otp: { action: 'navigate', url: 'https://app.test/' } },
          { otp: { action: 'assert', kind: 'title', expected: 'App' } },
        ],
      },
    });
    const child = spawn(process.execPath, ['docs/examples/minimal-executor.mjs'], {
      env: { ...process.env, OTP_URL: t.otpUrl, OTP_KEY: key, ONE_RUN: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await eventually(async () => expect(output).to.contain('session ots_'));
    const run = await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [testCase.body.id] } });
    expect(await exited, output).to.equal(0);
    expect(output).to.contain(`run ${run.body.runId} finished`);
    const done = await t.request('GET', `/otp/runs/${run.body.runId}`, { key });
    expect(done.body.status).to.equal('passed');
    expect(done.body.steps[1].actual).to.equal('App');
  });
});
