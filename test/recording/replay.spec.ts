// A recording made with trusted input, replayed by the reference runner, passes.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startRunner } from '../../src/runner/index.js';
import { startRecorder } from '../../src/runner/record/recorder.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { type PageServer, servePages } from './pages.js';

async function mouseClick(page: Page, selector: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not visible`);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

describe('Recording replayed by otp-runner', function () {
  this.timeout(60_000);
  let svc: TestService;
  let pages: PageServer;
  before(async () => {
    [svc, pages] = await Promise.all([startTestService(), servePages()]);
  });
  after(async () => {
    await pages?.close();
    await svc?.stop();
  });

  it('records a sign-in with the mouse and keyboard, and the runner replays it green', async () => {
    const start = `${pages.origin}/login`;
    const recorder = await startRecorder({
      server: svc.otpUrl,
      key: svc.adminKey,
      url: start,
      title: 'Sign in',
      headed: false,
    });
    const page = recorder.page;
    await page.waitForLoadState('load');
    await mouseClick(page, '#email');
    await page.keyboard.type('ada@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type('hunter2');
    await page.keyboard.press('Tab');
    await page.keyboard.type('4111 1111 1111 1111');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await mouseClick(page, 'input[name=remember]');
    const welcome = page.waitForURL(/\/welcome/);
    await mouseClick(page, '[data-testid=submit]');
    await welcome;
    const { testCaseId } = await recorder.stop();
    expect(testCaseId).to.match(/^tc_/);

    // What the replay must show: the typed e-mail and the chosen plan reached the next page.
    const testCase = await svc.request('GET', `/tests/cases/${testCaseId}`);
    const steps = [
      ...testCase.body.steps,
      {
        otp: {
          action: 'assert',
          kind: 'text',
          locator: { by: 'css', value: '#who' },
          op: 'equals',
          expected: 'ada@example.com',
        },
      },
      {
        otp: {
          action: 'assert',
          kind: 'text',
          locator: { by: 'css', value: '#plan' },
          op: 'equals',
          expected: 'p remembered',
        },
      },
    ];
    expect((await svc.request('PATCH', `/tests/cases/${testCaseId}`, { body: { steps } })).status).to.equal(200);

    const runner = await startRunner({ server: svc.otpUrl, key: svc.adminKey, name: 'replay' });
    await runner.ready;
    try {
      const run = await svc.request('POST', '/otp/runs', {
        body: { testCaseIds: [testCaseId], vars: { secret_1: 'hunter2', secret_2: '4111 1111 1111 1111' } },
      });
      expect(run.status, JSON.stringify(run.body)).to.equal(202);
      const done = await eventually(
        async () => {
          const { body } = await svc.request('GET', `/otp/runs/${run.body.id}`);
          expect(['passed', 'failed', 'error', 'cancelled']).to.include(body.status);
          return body;
        },
        30_000,
        100,
      );
      expect(done.status, JSON.stringify(done.steps.filter((s: any) => s.status !== 'pass'))).to.equal('passed');
      expect(done.counts).to.include({ passed: steps.length, failed: 0 });
    } finally {
      await runner.close();
    }
  });
});
