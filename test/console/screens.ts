// Screenshots of the console's pages on seeded data, at the sizes engineers use (1440x900, 1920x1080;
// 1366x768 for the plain pages): npx tsx test/console/screens.ts [dir]. A run finished and a run live
// (its inspector at the newest transition and scrubbed back), the machines, a session that was
// detached and resumed, two runs compared. Console errors are printed at the end.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { TestExecutor } from '../support/executor.js';
import { startTestService } from '../support/service.js';
import { answerPings, CHECKOUT_STEPS, newProject, notFound, SIGN_IN_STEPS } from './seed.js';
import { signIn as signInTab } from './sign-in.js';

const out = process.argv[2] ?? path.join(os.tmpdir(), 'otp-console-screens');
fs.mkdirSync(out, { recursive: true });
const t = await startTestService({ otp: { keepaliveSec: 1 } });
const p = await newProject(t);
// Every executor here answers its pings, as a real one does.
const answering = answerPings;
const signIn = await p.testCase('Sign in with email', SIGN_IN_STEPS);
const checkout = await p.testCase('Checkout with express shipping', CHECKOUT_STEPS);
await p.req('POST', '/tests/plans', { title: 'Smoke', testCaseIds: [signIn, checkout] });
const ex = answering(await p.executor());
const vars = { base: 'https://app.test', user: 'ada@example.com', secret_1: 'x' };
await p.req('POST', '/otp/runs', { testCaseIds: [signIn], vars, sessionId: ex.sessionId });
for (let i = 0; i < 5; i++) {
  const e = await ex.next('step.exec');
  ex.result(
    e,
    'pass',
    i === 4
      ? { actual: 'Welcome back, Ada', usedLocator: { by: 'role', value: 'heading' } }
      : i === 3
        ? { usedLocator: { by: 'testid', value: 'login' } }
        : {},
  );
}
await ex.next('run.finished');
const passed = (await p.req('POST', '/otp/runs', { testCaseIds: [checkout], sessionId: ex.sessionId })).body.id;
for (let i = 0; i < CHECKOUT_STEPS.length; i++)
  ex.result(await ex.next('step.exec'), 'pass', { durationMs: 100 + i * 40 });
await ex.next('run.finished');

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true });
const shotPage = await browser.newPage({ viewport: { width: 800, height: 500 } });
await shotPage.setContent(
  '<body style="font:16px sans-serif;padding:2rem"><h1>Your cart</h1><p>2 items · 48.00 EUR</p><label>Shipping <select><option>Express</option></select></label><p style="color:#b00">Payment service unavailable</p></body>',
);
const png = await shotPage.screenshot();
const failed = (await p.req('POST', '/otp/runs', { testCaseIds: [checkout], sessionId: ex.sessionId })).body.id;
let e = await ex.next('step.exec');
ex.result(e, 'pass', { durationMs: 420 });
e = await ex.next('step.exec');
ex.result(e, 'pass', { durationMs: 130, usedLocator: { by: 'label', value: 'Shipping' } });
e = await ex.next('step.exec');
const asset = await p.evidence(failed, 2, png, 'pay-now-missing.png');
ex.result(e, 'fail', notFound(e, asset));
await ex.next('run.finished');
// A run left in flight at its third step.
const live = (await p.req('POST', '/otp/runs', { testCaseIds: [checkout], sessionId: ex.sessionId })).body.id;
ex.result(await ex.next('step.exec'), 'pass');
ex.result(await ex.next('step.exec'), 'pass');
await ex.next('step.exec');

// A session that ran a run, dropped its socket, was resumed and is busy again.
const second = answering(
  await p.executor('ci-runner-2', { screenshot: true, upload: false, eval: true, maxParallel: 4 }),
);
const sessionId = second.sessionId!;
await p.req('POST', '/otp/runs', { testCaseIds: [checkout], sessionId });
for (let i = 0; i < CHECKOUT_STEPS.length; i++) second.result(await second.next('step.exec'), 'pass');
await second.next('run.finished');
second.terminate();
await second.closed;
await new Promise((r) => setTimeout(r, 300));
const resumed = answering(await TestExecutor.connect(t.otpUrl, { key: p.key }));
await resumed.hello(
  { screenshot: true, upload: false, eval: true, maxParallel: 4 },
  { name: 'ci-runner-2', resumeSessionId: sessionId },
);
await p.req('POST', '/otp/runs', { testCaseIds: [signIn], vars, sessionId });
await resumed.next('step.exec');
await new Promise((r) => setTimeout(r, 2500)); // a ping or two

const errors: string[] = [];
async function signedIn(width: number, height: number): Promise<Page> {
  const viewport = { width, height };
  const { page } = await signInTab({
    browser,
    base: t.service.restUrl,
    key: p.key,
    problems: errors,
    viewport,
    from: '/',
  });
  await page.waitForSelector('tr[data-run]');
  return page;
}

const base = t.service.restUrl;
{
  const page = await signedIn(1366, 768);
  await page.screenshot({ path: `${out}/1366-runs.png`, fullPage: true });
  await page.goto(`${base}/console/sessions`);
  await page.waitForSelector('tr[data-session]');
  await page.screenshot({ path: `${out}/1366-sessions.png`, fullPage: true });
  await page.goto(`${base}/console/cases/${signIn}`);
  await page.waitForSelector('ol.sentences');
  await page.screenshot({ path: `${out}/1366-test-case.png`, fullPage: true });
  await page.context().close();
}
for (const [w, h] of [
  [1440, 900],
  [1920, 1080],
] as const) {
  const page = await signedIn(w, h);
  const size = `${w}x${h}`;
  await page.goto(`${base}/console/runs/${failed}`);
  await page.waitForSelector('#steps tr[data-step="2"] img');
  await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
  await page.screenshot({ path: `${out}/${size}-run-finished.png` });
  // The drawing alone at the page's own pixels, to read its labels as they are shown.
  await page.locator('#run-diagram').screenshot({ path: `${out}/${size}-run-finished-diagram.png` });
  await page.screenshot({ path: `${out}/${size}-run-finished-full.png`, fullPage: true });
  // Scrubbed back to the step.exec of the failing step.
  await page.locator('.timeline tr.fr[data-frame="step.exec"]').nth(2).click();
  await page.waitForSelector('#steps tr[data-then="inflight"]');
  await page.screenshot({ path: `${out}/${size}-run-scrubbed.png` });
  await page.goto(`${base}/console/runs/${live}`);
  await page.waitForSelector('#run-diagram [data-state="running"].current', { state: 'attached' });
  await page.screenshot({ path: `${out}/${size}-run-live.png` });
  await page.locator('#run-diagram').screenshot({ path: `${out}/${size}-run-live-diagram.png` });
  await page.goto(`${base}/console/machines`);
  await page.waitForSelector('svg[data-machine="session"]');
  await page.screenshot({ path: `${out}/${size}-machines.png` });
  await page.screenshot({ path: `${out}/${size}-machines-full.png`, fullPage: true });
  await page.goto(`${base}/console/sessions/${sessionId}`);
  await page.waitForSelector('#session-phase[data-phase="busy"]');
  await page.screenshot({ path: `${out}/${size}-session.png` });
  await page.screenshot({ path: `${out}/${size}-session-full.png`, fullPage: true });
  await page.goto(`${base}/console/compare?a=${passed}&b=${failed}`);
  await page.waitForSelector('#compare-steps tr[data-first-diff]');
  await page.screenshot({ path: `${out}/${size}-compare.png` });
  await page.screenshot({ path: `${out}/${size}-compare-full.png`, fullPage: true });
  await page.context().close();
}
console.log('screenshots in', out, '; console errors:', errors);
await browser.close();
await t.stop();
process.exit(0);
