// The console in a real headless Chromium against the real service, with a simulated executor (a real
// WebSocket client) driving runs step by step: the page must follow every change without polling.
import { expect } from 'chai';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { startTestService, type TestService } from '../support/service.js';
import { CHECKOUT_STEPS, newProject, notFound, type Project, SIGN_IN_STEPS } from './seed.js';
import { signIn } from './sign-in.js';

describe("Console: the engineers' web UI", function () {
  this.timeout(20_000);
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

  /** A tab signed in with `key` through the sign-in form, from the root (which sends there); every console error is collected. */
  const signedIn = (key: string): Promise<{ context: BrowserContext; page: Page }> =>
    signIn({
      browser,
      base: t.service.restUrl,
      key,
      problems,
      viewport: { width: 1366, height: 768 },
      from: '/',
      form: /\/console\/sign-in\?next=/,
    });

  const state = (page: Page, name: string) =>
    page.waitForSelector(`#run-diagram [data-state="${name}"].current`, { state: 'attached' });

  it('signs in, and follows a run live from queued to passed, step by step, on the list, the run page and its diagram', async () => {
    const { context, page } = await signedIn(p.key);
    expect(await page.evaluate(() => document.cookie)).to.equal('');
    expect(page.url()).not.to.include(p.key);
    const caseId = await p.testCase('Checkout', CHECKOUT_STEPS);
    const created = await p.req('POST', '/otp/runs', { testCaseIds: [caseId] });
    expect(created.body.status).to.equal('queued');
    const runId = created.body.id as string;
    // The list hears of the new run (a notice from the database trigger), without a reload.
    await page.waitForSelector(`tr[data-run="${runId}"] .s-queued`);

    await page.goto(`${t.service.restUrl}/console/runs/${runId}`);
    await page.waitForSelector('#run-status .s-queued');
    const executor = await p.executor();
    await page.waitForSelector('#run-status .s-running');
    for (let i = 0; i < CHECKOUT_STEPS.length; i++) {
      const exec = await executor.next('step.exec');
      // While the executor holds the step, the diagram's current state is `running`, and the steps before are in.
      await state(page, 'running');
      await page.waitForSelector(`#steps tr[data-step="${i}"][data-status="pending"]`);
      executor.result(exec, 'pass', { durationMs: 10 + i });
      await page.waitForSelector(`#steps tr[data-step="${i}"][data-status="pass"]`);
    }
    await executor.next('run.finished');
    await page.waitForSelector('#run-status .s-passed');
    await state(page, 'done');
    const path = await page.$$eval('#run-diagram g.state.visited, #run-diagram g.state.current', (gs) =>
      gs.map((g) => g.getAttribute('data-state')),
    );
    expect(path).to.have.members(['advancing', 'running', 'recording', 'finishing', 'done']);
    expect(await page.$$eval('.timeline tbody tr', (rows) => rows.length)).to.be.greaterThan(8);
    executor.close();
    await context.close();
  });

  it('shows why a step failed: error, tried locators, console errors and the screenshot the executor uploaded', async () => {
    const { context, page } = await signedIn(p.key);
    const caseId = await p.testCase('Checkout fails', CHECKOUT_STEPS);
    const executor = await p.executor('failing-runner');
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId], sessionId: executor.sessionId })).body
      .id as string;
    await page.goto(`${t.service.restUrl}/console/runs/${runId}`);
    executor.result(await executor.next('step.exec'), 'pass');
    executor.result(await executor.next('step.exec'), 'pass');
    const exec = await executor.next('step.exec');
    const png = await page.screenshot();
    const assetId = await p.evidence(runId, 2, png, 'pay-now.png');
    const failure = notFound(exec, assetId);
    // A console error with a NUL in it: stored with U+FFFD, and the step says so.
    failure.evidence.consoleErrors.push('bad\u0000byte');
    executor.result(exec, 'fail', failure);
    await executor.next('run.finished');
    const row = page.locator('#steps tr[data-step="2"][data-status="fail"]');
    await row.waitFor();
    const text = await row.innerText();
    expect(text)
      .to.include('E_LOCATOR_NOT_FOUND')
      .and.include('No element matched')
      .and.include('the element with text exactly “Pay now”');
    expect(text).to.include("TypeError: Cannot read properties of undefined (reading 'total')");
    expect(text).to.include('bad\ufffdbyte').and.include('stored as U+FFFD (\ufffd) in: evidence.consoleErrors');
    // The screenshot opens through a signed link that needs no key.
    const link = row.getByRole('link', { name: 'Open pay-now.png' });
    const href = (await link.getAttribute('href'))!;
    expect(href).to.match(/\/api\/v1\/assets\/signed\/ast_[a-z0-9]+\?exp=\d+&sig=/);
    const [popup] = await Promise.all([context.waitForEvent('page'), link.click()]);
    const shot = await popup.request.get(popup.url());
    expect(shot.status()).to.equal(200);
    expect(Buffer.compare(await shot.body(), png)).to.equal(0);
    await popup.close();
    await row.locator('img').evaluate((img: HTMLImageElement) => img.decode());
    expect(await row.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).to.be.greaterThan(0);
    executor.close();
    await context.close();
  });

  it('starts a run from a test case page and cancels it from the run page', async () => {
    // A project of its own: no executor of another test can take the run.
    const q = await newProject(t);
    const { context, page } = await signedIn(q.key);
    const caseId = await q.testCase('Started from the page', CHECKOUT_STEPS);
    const executor = await q.executor('manual-runner');
    await page.goto(`${t.service.restUrl}/console/cases/${caseId}`);
    expect(await page.locator('ol.sentences li').first().innerText()).to.equal('Go to “https://shop.test/cart”.');
    await page.getByRole('button', { name: 'Run Started from the page' }).click();
    await page.waitForURL(/\/console\/runs\/otr_/);
    const runId = page.url().split('/').pop()!;
    const exec = await executor.next('step.exec', (f) => f.runId === runId);
    await state(page, 'running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await executor.next('run.cancel', (f) => f.runId === runId);
    await page.waitForSelector('#run-status .s-cancelled');
    expect((await q.req('GET', `/otp/runs/${runId}`)).body.status).to.equal('cancelled');
    expect(exec.payload.stepIndex).to.equal(0);
    executor.close();
    await context.close();
  });

  it("asks for the values of a case's {{variables}} before it runs it, secrets in a password field", async () => {
    const q = await newProject(t);
    const { context, page } = await signedIn(q.key);
    const caseId = await q.testCase('Sign in with variables', SIGN_IN_STEPS);
    const executor = await q.executor('vars-runner');
    // The list does not run it without its variables: its Run leads to the case's page.
    await page.goto(`${t.service.restUrl}/console/cases`);
    await page.getByRole('link', { name: 'Run Sign in with variables (give its variables first)' }).click();
    await page.waitForURL(`${t.service.restUrl}/console/cases/${caseId}`);
    const form = page.getByRole('form', { name: 'Run Sign in with variables' });
    expect(await form.getByLabel('secret_1').getAttribute('type')).to.equal('password');
    for (const [name, value] of [
      ['base', 'https://app.test'],
      ['user', 'ada@example.com'],
      ['secret_1', 'hunter2'],
    ])
      await form.getByLabel(name, { exact: true }).fill(value!);
    await form.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/console\/runs\/otr_/);
    const runId = page.url().split('/').pop()!;
    const exec = await executor.next('step.exec', (f) => f.runId === runId);
    // The first step's {{base}} went out filled in.
    expect(exec.payload.step.url).to.equal('https://app.test/login');
    expect((await q.req('GET', `/otp/runs/${runId}`)).body.varNames).to.have.members(['base', 'user', 'secret_1']);
    executor.close();
    await context.close();
  });

  it("asks in the plans list for the values of the {{variables}} a plan's cases use, and runs the plan with them", async () => {
    const q = await newProject(t);
    const signIn = await q.testCase('Sign in with variables', SIGN_IN_STEPS);
    const checkout = await q.testCase('Checkout', CHECKOUT_STEPS);
    const plan = (await q.req('POST', '/tests/plans', { title: 'Smoke', testCaseIds: [checkout, signIn] })).body
      .id as string;
    const plain = (await q.req('POST', '/tests/plans', { title: 'Plain', testCaseIds: [checkout] })).body.id as string;
    const executor = await q.executor('plan-runner');
    const { context, page } = await signedIn(q.key);
    await page.goto(`${t.service.restUrl}/console/cases`);
    // A plan without variables keeps its one-click Run; the other asks for each variable once.
    await page.locator(`tr[data-plan="${plain}"]`).getByRole('button', { name: 'Run plan Plain' }).waitFor();
    const form = page.getByRole('form', { name: 'Run plan Smoke' });
    const fields = await form
      .locator('input[name^="var."]')
      .evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).name));
    expect(fields).to.deep.equal(['var.base', 'var.user', 'var.secret_1']);
    expect(await form.getByLabel('secret_1').getAttribute('type')).to.equal('password');
    for (const [name, value] of [
      ['base', 'https://app.test'],
      ['user', 'ada@example.com'],
      ['secret_1', 'hunter2'],
    ])
      await form.getByLabel(name, { exact: true }).fill(value!);
    await form.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/\/console\/runs\/otr_/);
    const runId = page.url().split('/').pop()!;
    const run = (await q.req('GET', `/otp/runs/${runId}`)).body;
    expect(run.planId).to.equal(plan);
    expect(run.varNames).to.have.members(['base', 'user', 'secret_1']);
    // The plan's second case is the one with variables: its first step goes out filled in.
    for (let i = 0; i < CHECKOUT_STEPS.length; i++)
      executor.result(await executor.next('step.exec', (f) => f.runId === runId), 'pass');
    const exec = await executor.next('step.exec', (f) => f.runId === runId);
    expect(exec.payload.step.url).to.equal('https://app.test/login');
    executor.close();
    await context.close();
  });

  it("shows a key of another project none of this project's data, and its stream carries none of its events", async () => {
    const other = await newProject(t);
    const mine = await p.req('GET', '/otp/runs?limit=1');
    const myRun = mine.body.items[0].id as string;
    const { context, page } = await signedIn(other.key);
    await page.waitForSelector('#content table, #content .card');
    expect(await page.locator('#content').innerText()).to.include('No runs yet');
    for (const path of ['/console/sessions?status=all', '/console/cases', '/console/assets?bucket=otp-evidence']) {
      await page.goto(`${t.service.restUrl}${path}`);
      await page.waitForFunction(() => !document.querySelector('#content')!.textContent!.includes('Loading'));
      const text = await page.locator('#content').innerText();
      expect(text, path).not.to.include(p.projectId);
      expect(await page.locator('[data-session], [data-case], [data-asset]').count(), path).to.equal(0);
    }
    await page.goto(`${t.service.restUrl}/console/runs/${myRun}`);
    await page.waitForSelector('#content .error');
    expect(await page.locator('#content').innerText()).to.match(/not found/i);
    await context.close();

    // Streams: the other project's stream, opened on this project's run, hears only its own project.
    // Each event names what changed (data: run or session ids).
    const open = (key: string, query = '') => {
      const abort = new AbortController();
      const events: string[] = [];
      const done = fetch(`${t.service.restUrl}/console/f/live${query}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: abort.signal,
      })
        .then(async (res) => {
          for await (const chunk of res.body!) {
            for (const m of Buffer.from(chunk)
              .toString()
              .matchAll(/^event: (.+)\ndata: (.*)$/gm))
              events.push(`${m[1]} ${m[2]}`);
          }
        })
        .catch(() => {});
      return {
        events,
        close: () => {
          abort.abort();
          return done;
        },
      };
    };
    const theirs = open(other.key, `?run=${myRun}`);
    const ours = open(p.key);
    const until = async (cond: () => boolean) => {
      while (!cond()) await new Promise((r) => setTimeout(r, 10));
    };
    const caseId = await p.testCase('Mine', CHECKOUT_STEPS);
    const mineNow = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.id as string;
    await until(() => ours.events.includes(`runs-changed ${mineNow}`));
    // Their own run comes after ours: once they hear it, they would have heard ours too.
    const otherCase = await other.testCase('Theirs', CHECKOUT_STEPS);
    const theirsNow = (await other.req('POST', '/otp/runs', { testCaseIds: [otherCase] })).body.id as string;
    await until(() => theirs.events.includes(`runs-changed ${theirsNow}`));
    expect(theirs.events.join('\n'))
      .not.to.include(mineNow)
      .and.not.to.include(myRun)
      .and.not.to.include('run-changed');
    await Promise.all([theirs.close(), ours.close()]);
  });

  it('shows the sessions, the test cases, the assets and both machines with no console error on any page', async () => {
    const executor = await p.executor('session-page-runner');
    const { context, page } = await signedIn(p.key);
    await page.goto(`${t.service.restUrl}/console/sessions`);
    const row = page.locator(`tr[data-session="${executor.sessionId}"]`);
    await row.waitFor();
    const sessionText = await row.innerText();
    expect(sessionText, sessionText)
      .to.include('session-page-runner')
      .and.match(/\d\s+of 2/);
    // A session that closes leaves the live list at once.
    executor.close();
    await row.waitFor({ state: 'detached' });
    await page.goto(`${t.service.restUrl}/console/cases`);
    await page.waitForSelector('tr[data-case]');
    await page.goto(`${t.service.restUrl}/console/assets?bucket=otp-evidence`);
    await page.waitForSelector('nav[aria-label="Buckets"] a[aria-current]');
    await page.goto(`${t.service.restUrl}/console/machines`);
    await page.waitForSelector('svg[data-machine="session"] [data-state="ready.awaitingPong"]', { state: 'attached' });
    expect(await page.locator('svg[data-machine="run"] [data-event="always"]').count()).to.be.greaterThan(0);
    expect(await page.locator('svg[data-machine="run"] [data-event="after stepTimeout"]').count()).to.equal(1);
    expect(await page.locator('svg[data-machine="run"] .guard').count()).to.be.greaterThan(0);
    // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Skip to content');
    await context.close();
    expect(problems).to.deep.equal([]);
  });
});
