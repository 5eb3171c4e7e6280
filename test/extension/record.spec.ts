// Recording in the extension, end to end in real headless Chromium: the side panel (opened as a page
// of the extension, ?tab= naming the tab it records) records a tab of the user's while a scripted
// user clicks and types with trusted input; a step is deleted in the panel; Stop and save makes the
// test case through POST /otp/recordings; that test case runs and passes on the extension and on
// otp-runner. Also a recording the service starts and stops over REST on the extension's session,
// and a hostile page's forged events and messages, which record nothing.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { type Runner, startRunner } from '../../src/runner/index.js';
import { type PageServer, servePages } from '../recording/pages.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, finished, launchExtension } from './harness.js';

async function mouseClick(page: Page, selector: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not visible`);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

/** The id chrome.tabs gives the page at this address (asked of the extension's worker). */
async function tabIdOf(ext: ExtensionBrowser, url: string): Promise<number> {
  return (await ext.worker()).evaluate(async (u) => {
    const tabs = await (globalThis as any).chrome.tabs.query({});
    return tabs.find((t: any) => t.url === u).id as number;
  }, url);
}

const SECRETS = { secret_1: 'hunter2', secret_2: '4111 1111 1111 1111' };

describe('the extension records a tab of the user: side panel, REST, hostile page', function () {
  this.timeout(120_000);
  let t: TestService;
  let pages: PageServer;
  let ext: ExtensionBrowser;
  let runner: Runner;
  let key: string;
  let projectId: string;
  let extensionId: string;

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    pages = await servePages();
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key });
    extensionId = new URL((await ext.worker()).url()).host;
    runner = await startRunner({ server: t.otpUrl, key });
    await runner.ready;
  });
  after(async () => {
    await runner?.close();
    await ext?.close();
    await pages?.close();
    await t?.stop();
  });

  /** The side panel as a page of the extension, recording the tab of `page`. */
  async function openPanel(page: Page): Promise<Page> {
    const panel = await ext.context.newPage();
    await panel.goto(`chrome-extension://${extensionId}/sidepanel.html?tab=${await tabIdOf(ext, page.url())}`);
    return panel;
  }

  it('records clicks and typing in the panel, deletes a step, saves a test case that passes on both executors', async () => {
    const sessionId = await ext.sessionId();
    const start = `${pages.origin}/login`;
    const page = await ext.context.newPage();
    await page.goto(start);
    const panel = await openPanel(page);
    await panel.fill('#title', 'Sign in from the extension');
    await panel.click('#record');
    await panel.locator('#status', { hasText: 'Recording' }).waitFor();

    await mouseClick(page, '#email');
    await page.keyboard.type('ada@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type('hunter2');
    await mouseClick(page, 'input[name=card]');
    await page.keyboard.type('4111 1111 1111 1111');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await mouseClick(page, 'button:text-is("Help") >> nth=0'); // a step the user then deletes
    // Paused, an action records nothing; resumed, recording goes on.
    await panel.click('#pause');
    await panel.locator('#status', { hasText: /^Paused/ }).waitFor();
    await mouseClick(page, 'a[href="/about"] + img');
    await panel.click('#pause');
    await panel.locator('#status', { hasText: /^Recording/ }).waitFor();
    await mouseClick(page, 'input[name=remember]');
    // A forged click, forged typing and a message posted by the page record nothing.
    await page.evaluate(() => {
      const help = document.querySelectorAll('button')[2]!;
      help.dispatchEvent(new MouseEvent('click', { bubbles: true, detail: 1 }));
      const email = document.querySelector<HTMLInputElement>('#email')!;
      email.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
      window.postMessage(
        {
          kind: 'otp.recorded',
          message: { doc: 'x', seq: 1, at: '', step: { otp: { action: 'navigate', url: 'http://evil.test/' } } },
        },
        '*',
      );
    });
    const welcome = page.waitForURL(/\/welcome/);
    await mouseClick(page, '[data-testid=submit]');
    await welcome;

    const steps = panel.locator('#steps > li');
    // The panel shows each step with its sentence and its candidates.
    await eventually(async () => expect(await steps.count()).to.be.at.least(11), 10_000);
    await expect(await steps.nth(1).locator('.sentence').textContent()).to.equal('Click the textbox “Email”');
    expect(await steps.nth(1).locator('.candidates li').allTextContents()).to.deep.equal([
      'role="textbox" name="Email"',
      'label="Email"',
      'css="#email"',
    ]);
    const help = panel.locator('#steps > li', { hasText: 'button:nth-of-type(1)' });
    await help.locator('button.delete').click();
    await eventually(async () => expect(await help.count()).to.equal(0));
    await panel.click('#stop');
    await panel.locator('#status', { hasText: 'Saved as test case' }).waitFor();
    const testCaseId = await panel.locator('#status').getAttribute('data-test-case-id');

    const testCase = await t.request('GET', `/tests/cases/${testCaseId}`, { key });
    expect(testCase.body.title).to.equal('Sign in from the extension');
    expect(testCase.body.labels).to.include('recorded');
    const recorded = testCase.body.steps;
    const text = JSON.stringify(recorded);
    expect(text).not.to.contain('hunter2');
    expect(text).not.to.contain('4111');
    expect(text).not.to.contain('evil.test');
    expect(text, 'the click while paused').not.to.contain('Logo');
    expect(recorded.map((s: any) => s.otp.action)).to.deep.equal([
      'navigate',
      'click',
      'type',
      'press',
      'type',
      'click',
      'type',
      'press',
      'select',
      'check',
      'click',
    ]);
    expect(recorded[4].otp.text).to.equal('{{secret_1}}');
    expect(recorded[6].otp.text).to.equal('{{secret_2}}');
    expect(recorded[8].otp).to.include({ by: 'label', value: 'Pro' });

    for (const on of [sessionId, runner.sessionId!]) {
      const run = await t.request('POST', '/otp/runs', {
        key,
        body: { testCaseIds: [testCaseId], sessionId: on, vars: SECRETS },
      });
      expect(run.status).to.equal(202);
      const done = await finished(t, key, projectId, run.body.runId);
      expect(done.status, `${on}: ${JSON.stringify(done.steps.map((s: any) => s.error))}`).to.equal('passed');
    }
  });

  it('records a recording the service starts and stops over REST on the extension session', async () => {
    const sessionId = await ext.sessionId();
    // The extension opens the tab on about:blank, then goes to the URL; at the page event its URL may
    // not be set yet, so the tab is told from the extension's own pages by what it is not.
    const opened = ext.context.waitForEvent('page', (p) => !p.url().startsWith('chrome-extension://'));
    const started = await t.request('POST', `/otp/sessions/${sessionId}/recordings`, {
      key,
      body: { title: 'About page', url: `${pages.origin}/login` },
    });
    expect(started.status).to.equal(201);
    const page = await opened;
    await page.waitForURL(`${pages.origin}/login`);
    await page.locator('a[href="/about"]').waitFor();
    const injected = await eventually(async () => {
      const { body } = await t.request('GET', `/otp/recordings/${started.body.id}`, { key });
      expect(body.events).to.have.length(1);
      return body;
    });
    expect(injected.events[0].step).to.deep.equal({ otp: { action: 'navigate', url: `${pages.origin}/login` } });
    // The content script enters once the document is loaded: wait for the worker to have injected it.
    await eventually(async () => {
      const ready = await page.evaluate(() => performance.getEntriesByType('navigation').length > 0);
      expect(ready).to.equal(true);
    });
    const about = page.waitForURL(/\/about/);
    await mouseClick(page, 'a[href="/about"]');
    await about;
    await eventually(async () => {
      const { body } = await t.request('GET', `/otp/recordings/${started.body.id}`, { key });
      expect(body.events).to.have.length(2);
    });
    const stopped = await t.request('POST', `/otp/recordings/${started.body.id}/stop`, { key });
    expect(stopped.status).to.equal(200);
    const testCase = await t.request('GET', `/tests/cases/${stopped.body.testCaseId}`, { key });
    expect(testCase.body.steps.map((s: any) => s.otp.action)).to.deep.equal(['navigate', 'click']);
    expect(testCase.body.steps[1].otp.locator.candidates[0]).to.deep.equal({
      by: 'role',
      value: 'link',
      name: 'About',
      exact: true,
    });
    const state = await (await ext.worker()).evaluate(() => (globalThis as any).otpExtension.recorder.state());
    expect(state).to.include({ status: 'idle' });
    expect(state.saved).to.deep.equal({ recordingId: started.body.id, testCaseId: stopped.body.testCaseId });
  });

  it('goes on with a panel recording after its worker is stopped: no step is lost', async () => {
    const page = await ext.context.newPage();
    await page.goto(`${pages.origin}/login`);
    const panel = await openPanel(page);
    await panel.click('#record');
    await panel.locator('#status', { hasText: /^Recording/ }).waitFor();
    await mouseClick(page, '#email');
    await page.keyboard.type('grace@example.com');
    await page.keyboard.press('Tab');
    await panel.locator('#steps > li').nth(3).waitFor();
    await (await ext.worker()).evaluate(() => ((globalThis as any).before = 'the stop'));
    const cdp = await ext.context.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // The next step the page sends wakes a new worker, which goes on with the recording.
    await mouseClick(page, 'input[name=remember]');
    await eventually(async () => {
      const worker = await ext.worker();
      expect(await worker.evaluate(() => (globalThis as any).before)).to.equal(undefined);
      expect(await worker.evaluate(() => (globalThis as any).otpExtension.recorder.state().steps.length)).to.equal(5);
    }, 15_000);
    await panel.click('#stop');
    await panel.locator('#status', { hasText: 'Saved as test case' }).waitFor();
    const testCaseId = await panel.locator('#status').getAttribute('data-test-case-id');
    const testCase = await t.request('GET', `/tests/cases/${testCaseId}`, { key });
    expect(testCase.body.steps.map((s: any) => s.otp.action)).to.deep.equal([
      'navigate',
      'click',
      'type',
      'press',
      'check',
    ]);
  });
});
