// The console's failures page and the triage on a failed run's page, in headless Chromium, on data an
// executor produced; screenshots land in $SCREENS_DIR when it is set (to look at them).

import path from 'node:path';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { answerPings, newProject, type Project } from '../console/seed.js';
import { signIn } from '../console/sign-in.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';

const STEPS = [
  { label: 'Open the shop', otp: { action: 'navigate', url: '{{base}}/shop' } },
  {
    label: 'Check the total',
    otp: {
      action: 'assert',
      kind: 'text',
      locator: { by: 'testid', value: 'total' },
      op: 'equals',
      expected: 'Total: 42',
    },
  },
  {
    label: 'Pay',
    otp: {
      action: 'click',
      locator: {
        candidates: [
          { by: 'testid', value: 'pay' },
          { by: 'role', value: 'button', name: 'Pay' },
        ],
      },
    },
  },
];

describe('ai in the console: failures by cause, and the triage of a failed run', function () {
  this.timeout(90_000);
  let t: TestService;
  let browser: Browser;
  let p: Project;
  const problems: string[] = [];
  before(async () => {
    [t, browser] = await Promise.all([
      startTestService({ otp: { stepGraceMs: 100 } }),
      chromium.launch({ executablePath: '/usr/bin/chromium', headless: true }),
    ]);
    p = await newProject(t);
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function signedIn(): Promise<Page> {
    return (await signIn({ browser, base: t.service.restUrl, key: p.key, problems })).page;
  }

  const snap = async (page: Page, name: string) => {
    if (process.env.SCREENS_DIR)
      await page.screenshot({ path: path.join(process.env.SCREENS_DIR, `${name}.png`), fullPage: true });
  };

  it('lists causes with counts and a screenshot, and shows why each case of a failed run failed', async () => {
    const checkout = await p.testCase('Checkout', STEPS);
    const cart = await p.testCase('Cart total', STEPS.slice(0, 2));
    const ex = answerPings(await p.executor());
    const shotPage = await browser.newPage({ viewport: { width: 640, height: 400 } });
    await shotPage.setContent(
      '<body style="font:16px sans-serif;padding:2rem"><h1>Your cart</h1><p data-testid="total">Total: 40</p><button>Pay</button></body>',
    );
    const png = await shotPage.screenshot();
    await shotPage.close();
    const run = async (fail: (stepIndex: number, runId: string) => Promise<Record<string, unknown> | undefined>) => {
      const runId = (
        await p.req('POST', '/otp/runs', {
          testCaseIds: [checkout, cart],
          vars: { base: 'https://shop.test' },
          sessionId: ex.sessionId,
        })
      ).body.id as string;
      for (;;) {
        const frame = await Promise.race([
          ex.next('step.exec', (f) => f.runId === runId),
          ex.next('run.finished', (f) => f.runId === runId),
        ]);
        if (frame.type === 'run.finished') return runId;
        const failure = await fail(frame.payload.stepIndex as number, runId);
        if (failure) ex.result(frame, 'fail', failure);
        else ex.result(frame, 'pass');
      }
    };
    await run(async () => undefined);
    const failed = await run(async (i, runId) => {
      if (i === 1 || i === 4) {
        const asset = await p.evidence(runId, i, png, `total-${i}.png`);
        return {
          error: { code: 'E_ASSERT_FAILED', message: 'expected text to equal "Total: 42", got "Total: 40"' },
          actual: 'Total: 40',
          usedLocator: { by: 'testid', value: 'total' },
          evidence: { screenshotAssetId: asset },
        };
      }
      return undefined;
    });
    await eventually(async () => expect((await p.req('GET', '/ai/failures')).body.items).to.have.length(1), 10_000);

    const page = await signedIn();
    await page.getByRole('link', { name: 'Failures' }).click();
    await page.waitForURL(/\/console\/failures$/);
    const row = page.locator('table.failures tbody tr');
    await row.first().waitFor();
    expect(await row.count()).to.equal(1);
    const text = await row.first().innerText();
    expect(text)
      .to.contain('E_ASSERT_FAILED')
      .and.contain('testid=total')
      .and.contain('2 in 1 run, 2 cases')
      .and.contain('new');
    await page.locator('table.failures img').first().waitFor();
    // Once the image has loaded or failed (decode() settles then; attached is not loaded), it shows.
    expect(
      await page.locator('table.failures img').evaluate(async (img: HTMLImageElement) => {
        await img.decode().catch(() => {});
        return img.complete && img.naturalWidth > 0;
      }),
    ).to.equal(true);
    await snap(page, 'ai-failures');
    // Filtered to recurring causes: none yet.
    await page.getByLabel('Status').selectOption('recurring');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No failures in the last 7 days match these filters.').waitFor();

    await page.goto(`${t.service.restUrl}/console/runs/${failed}`);
    const triage = page.locator('#triage tbody tr');
    await triage.first().waitFor();
    expect(await triage.count()).to.equal(2);
    expect(
      await page
        .locator('#triage [data-category]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-category'))),
    ).to.deep.equal(['product_regression', 'product_regression']);
    expect(await triage.first().innerText())
      .to.contain('the page showed "Total: 40"')
      .and.contain('file bug');
    await snap(page, 'ai-run-triage');
    expect(problems).to.deep.equal([]);
  });
});
