// A retried test case in real Chromium: the first attempt fails on a page that is not ready yet, the
// second passes in a fresh browser context (the cookie the first attempt got is gone), and the run
// passes with the case flaky.
import { expect } from 'chai';
import { chromium } from 'playwright-core';
import { type RunnerHarness, servePages, startHarness } from './harness.js';

describe('otp-runner: retries of a failed test case', function () {
  this.timeout(60_000);
  let h: RunnerHarness;
  let site: Awaited<ReturnType<typeof servePages>>;
  let visits = 0;

  before(async () => {
    site = await servePages({
      // Not ready on the first visit; "fresh" unless this context has been here before.
      '/app': (req, res) => {
        visits++;
        const fresh = !(req.headers.cookie ?? '').includes('seen=1');
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'seen=1; Path=/' });
        res.end(
          `<!doctype html><title>App</title><p id="state">${visits === 1 ? 'loading' : 'ready'} ${fresh ? 'fresh' : 'stale'}</p>`,
        );
      },
    });
    h = await startHarness();
  });
  after(async () => {
    await h?.stop();
    await site?.close();
  });

  it('runs the case again in a fresh context and passes it as flaky', async () => {
    const run = await h.run(
      [
        { otp: { action: 'navigate', url: site.url('/app') } },
        {
          otp: {
            action: 'assert',
            kind: 'text',
            locator: { by: 'css', value: '#state' },
            op: 'equals',
            expected: 'ready fresh',
          },
          timeoutMs: 2_000,
        },
      ],
      { retries: 1 },
    );
    expect(run.status, JSON.stringify(run.steps)).to.equal('passed');
    expect(run.counts.flaky).to.equal(1);
    expect(run.steps.map((s: { attempt: number }) => s.attempt)).to.deep.equal([2, 2]);
    const failed = run.earlierAttempts.find((a: { status: string }) => a.status === 'fail');
    expect(failed).to.deep.include({ stepIndex: 1, attempt: 1, actual: 'loading fresh' });
    expect(visits).to.equal(2);

    // The run's page says so: the flaky case in the counts, each step's attempt and what it did before.
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
    try {
      const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
      await page.goto(`${h.t.service.restUrl}/console/sign-in`);
      await page.getByLabel('API key').fill(h.key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/runs$/);
      await page.goto(`${h.t.service.restUrl}/console/runs/${run.id}`);
      await page.waitForSelector('#run-status .s-passed');
      expect(await page.locator('dl.facts').innerText()).to.include('1 test case flaky (passed on a retry)');
      const assertRow = page.locator('tr[data-step="1"]');
      expect(await assertRow.innerText()).to.match(/attempt 2[\s\S]*Attempt 1: fail E_ASSERT_FAILED/);
      if (process.env.SCREENSHOTS)
        await page.screenshot({ path: `${process.env.SCREENSHOTS}/run-retried.png`, fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
