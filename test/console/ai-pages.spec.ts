// The ai pages of the console in headless Chromium: a test case's history (strip of last runs,
// flakiness, quarantine, requirements and bugs, healing) and the healing review with accept and reject.

import fs from 'node:fs/promises';
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Frame } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { newProject, type Project } from './seed.js';
import { signIn } from './sign-in.js';

const oldLocator = { by: 'testid', value: 'save-v1' };
const newLocator = { by: 'role', value: 'button', name: 'Save' };
const SHOTS = process.env.AI_SCREENS_DIR;

describe('Console: test case history and healing review', function () {
  this.timeout(30_000);
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
    const viewport = { width: 1366, height: 900 };
    return (await signIn({ browser, base: t.service.restUrl, key: p.key, problems, viewport })).page;
  }

  async function runs(
    caseId: string,
    count: number,
    answer: (i: number, exec: Frame) => Record<string, unknown> | Promise<Record<string, unknown>>,
  ) {
    const executor = await p.executor('history-runner');
    for (let i = 0; i < count; i += 1) {
      const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId], sessionId: executor.sessionId })).body
        .id as string;
      for (;;) {
        const frame = await Promise.race([
          executor.next('step.exec', (f) => f.runId === runId),
          executor.next('run.finished', (f) => f.runId === runId),
        ]);
        if (frame.type === 'run.finished') break;
        const { status, ...extra } = await answer(i, frame);
        executor.result(frame, status as 'pass', extra);
      }
    }
    executor.close();
  }

  it('shows the history of a flaky case, quarantines it, and reviews its healing proposal', async () => {
    const steps = [
      { otp: { action: 'navigate', url: 'https://shop.test/cart' }, label: 'open the cart' },
      { otp: { action: 'click', locator: { candidates: [oldLocator, newLocator] } }, label: 'save' },
    ];
    const caseId = await p.testCase('Save the cart', steps);
    const requirement = (await p.req('POST', '/requirements', { title: 'Carts can be saved' })).body.id;
    const bug = (await p.req('POST', '/bugs', { title: 'Save button renamed' })).body.id;
    expect(
      (await p.req('POST', `/tests/cases/${caseId}/links`, { relation: 'covers', targetId: requirement })).status,
    ).to.equal(201);
    expect((await p.req('POST', `/tests/cases/${caseId}/links`, { targetId: bug })).status).to.equal(201);
    // The page the newest healed step saw, as its screenshot evidence.
    const shotPage = await browser.newPage({ viewport: { width: 480, height: 200 } });
    await shotPage.setContent(
      '<main style="font:16px sans-serif;padding:1rem"><h1>Cart</h1><button>Save</button></main>',
    );
    const png = await shotPage.screenshot();
    await shotPage.close();
    await runs(caseId, 10, async (i, exec) => {
      if (exec.payload.stepIndex === 0) return { status: 'pass' };
      if (i % 3 === 1)
        return {
          status: 'fail',
          error: { code: 'E_TIMEOUT', message: 'the element was found but the action did not complete in time' },
        };
      const evidence =
        i === 9 ? { evidence: { screenshotAssetId: await p.evidence(exec.runId!, 1, png, 'save.png') } } : {};
      return {
        status: 'pass',
        usedLocator: newLocator,
        triedLocators: [
          { ...oldLocator, count: 0 },
          { ...newLocator, count: 1, visible: true, enabled: true },
        ],
        ...evidence,
      };
    });

    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/cases/${caseId}/history`);
    await page.waitForSelector('.run-strip');
    expect(await page.locator('.run-strip a').count()).to.equal(10);
    expect(await page.locator('.run-strip a.o-fail').count()).to.equal(3);
    expect(await page.locator('#flakiness').innerText())
      .to.include('flaky')
      .and.include('10 runs')
      .and.include('3 failed');
    const text = await page.locator('#content').innerText();
    expect(text).to.include('Carts can be saved').and.include('Save button renamed');
    expect(text).to.include('Not quarantined');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/case-history.png`, fullPage: true });
    await page.getByRole('button', { name: 'Quarantine' }).click();
    await page.waitForSelector('#quarantine .s-quarantined');
    expect((await p.req('GET', '/ai/flaky')).body.items[0].quarantine.testCaseId).to.equal(caseId);

    await page.goto(`${t.service.restUrl}/console/healing`);
    const card = page.locator('article.proposal');
    await card.waitFor();
    expect(await card.count()).to.equal(1);
    expect(await card.innerText())
      .to.include('Save the cart, step 2 (save)')
      .and.include('the step passed only through this candidate');
    await card.locator('.shot img').evaluate((img: HTMLImageElement) => img.decode());
    expect(await card.locator('.shot img').evaluate((img: HTMLImageElement) => img.naturalWidth)).to.equal(480);
    expect(await card.locator('table.counts tbody tr').count()).to.equal(2);
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/healing.png`, fullPage: true });
    await card.getByRole('button', { name: 'Accept: make a new version' }).click();
    await page.waitForSelector('article.proposal .s-accepted');
    expect(await page.locator('article.proposal').innerText()).to.include('version 2');
    const changed = (await p.req('GET', `/tests/cases/${caseId}`)).body;
    expect(changed.steps[1].otp.locator.candidates[0]).to.deep.equal({ by: 'role', name: 'Save', value: 'button' });

    await page.goto(`${t.service.restUrl}/console/cases/${caseId}/history`);
    await page.waitForSelector('#quarantine .s-quarantined');
    expect(await page.locator('#content').innerText())
      .to.include('accepted')
      .and.include('version 2');
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/case-history-after.png`, fullPage: true });
    expect(problems).to.deep.equal([]);
  });

  it('rejects a proposal with a reason from the review page', async () => {
    const caseId = await p.testCase('Pay', [
      {
        otp: {
          action: 'click',
          locator: {
            candidates: [
              { by: 'testid', value: 'pay-v1' },
              { by: 'text', value: 'Pay now' },
            ],
          },
        },
      },
    ]);
    await runs(caseId, 1, () => ({
      status: 'pass',
      usedLocator: { by: 'text', value: 'Pay now' },
      triedLocators: [
        { by: 'testid', value: 'pay-v1', count: 0 },
        { by: 'text', value: 'Pay now', count: 1, visible: true, enabled: true },
      ],
    }));
    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/healing`);
    const card = page.locator('article.proposal', { hasText: 'Pay now' });
    await card.waitFor();
    await card.getByLabel('Why not').fill('the test id comes back next sprint');
    await card.getByRole('button', { name: 'Reject' }).click();
    await page.waitForSelector('article.proposal .s-rejected');
    const rejected = (await p.req('GET', '/ai/healing?status=rejected')).body.items;
    expect(rejected.map((x: { reason: string }) => x.reason)).to.include('the test id comes back next sprint');
    expect(problems).to.deep.equal([]);
    if (SHOTS) await fs.access(SHOTS);
  });
});
