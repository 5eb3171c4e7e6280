// The recorder against real headless Chromium, a page served by the test and the real service: a
// person's actions (trusted input through Playwright's mouse and keyboard) become steps with ranked
// locator candidates, each matching exactly one element, and sensitive text becomes {{secret_N}}.
import { expect } from 'chai';
import type { Page, Locator as PwLocator } from 'playwright-core';
import { type RecordedStep, type Recorder, startRecorder } from '../../src/runner/record/recorder.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { type PageServer, servePages } from './pages.js';

const RANK = ['testid', 'role', 'label', 'placeholder', 'alt', 'text', 'title', 'css'];

interface Loc {
  by: string;
  value: string;
  name?: string;
  exact?: boolean;
}

/** The Playwright locator an OTP locator names (the strategies the recorder emits). */
function playwrightLocator(page: Page, loc: Loc): PwLocator {
  const exact = loc.exact ?? false;
  switch (loc.by) {
    case 'testid':
      return page.getByTestId(loc.value);
    case 'role':
      return page.getByRole(loc.value as Parameters<Page['getByRole']>[0], { name: loc.name, exact });
    case 'label':
      return page.getByLabel(loc.value, { exact });
    case 'placeholder':
      return page.getByPlaceholder(loc.value, { exact });
    case 'alt':
      return page.getByAltText(loc.value, { exact });
    case 'text':
      return page.getByText(loc.value, { exact });
    case 'title':
      return page.getByTitle(loc.value, { exact });
    default:
      return page.locator(loc.value);
  }
}

const candidatesOf = (step: RecordedStep): Loc[] => {
  const locator = step.otp.locator as { candidates?: Loc[] } & Loc;
  return locator.candidates ?? [locator];
};

/** Clicks the middle of an element with the mouse: trusted input, as a person would. */
async function mouseClick(page: Page, selector: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not visible`);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
}

describe('Recorder: trusted input in real Chromium becomes steps', function () {
  this.timeout(30_000);
  let svc: TestService;
  let pages: PageServer;
  let recorder: Recorder | undefined;

  before(async () => {
    [svc, pages] = await Promise.all([startTestService(), servePages()]);
  });
  after(async () => {
    await recorder?.stop().catch(() => {});
    await pages?.close();
    await svc?.stop();
  });

  it('records clicks, typing, keys, a select and a checkbox with unique ranked candidates; passwords and card numbers as {{secret_N}}', async () => {
    const start = `${pages.origin}/login`;
    recorder = await startRecorder({
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
    await page.keyboard.press('Tab'); // to the password field
    await page.keyboard.type('hunter2');
    await mouseClick(page, 'input[name=card]');
    await page.keyboard.type('4111 1111 1111 1111');
    await page.keyboard.press('Tab'); // to the select
    await page.keyboard.press('ArrowDown'); // Pro: one change event per arrow key...
    await page.keyboard.press('ArrowDown'); // ...Team
    await page.keyboard.press('ArrowUp'); // ...and back to Pro: one select step
    await mouseClick(page, 'input[name=remember]');
    const welcome = page.waitForURL(/\/welcome/);
    await mouseClick(page, '[data-testid=submit]');
    await welcome;
    await recorder.settle();

    const steps = recorder.steps;
    const actions = steps.map((s) => s.otp.action);
    expect(actions).to.deep.equal([
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
    expect(steps[0]!.otp).to.deep.equal({ action: 'navigate', url: start });
    expect(steps[2]!.otp).to.include({ text: 'ada@example.com', clear: true });
    expect(steps[3]!.otp.key).to.equal('Tab');
    expect(steps[4]!.otp.text).to.equal('{{secret_1}}');
    expect(steps[6]!.otp.text).to.equal('{{secret_2}}');
    expect(steps[8]!.otp).to.include({ by: 'label', value: 'Pro' });

    // The email field: found by role and name, by its label, and by CSS, in that order.
    expect(candidatesOf(steps[1]!)).to.deep.equal([
      { by: 'role', value: 'textbox', name: 'Email', exact: true },
      { by: 'label', value: 'Email', exact: true },
      { by: 'css', value: '#email' },
    ]);
    // The submit button: its test id, then role and name; not its text, which the heading shares.
    expect(candidatesOf(steps[10]!).map((c) => c.by)).to.deep.equal(['testid', 'role', 'css']);
    expect(candidatesOf(steps[6]!).map((c) => c.by)).to.deep.equal(['placeholder', 'css']);

    // Every candidate, as Playwright reads it, matches exactly one element of the start page,
    // and the candidates come in the documented rank.
    const check = await page.context().newPage();
    await check.goto(start);
    for (const step of steps.slice(1)) {
      const candidates = candidatesOf(step);
      const ranks = candidates.map((c) => RANK.indexOf(c.by));
      expect(ranks, JSON.stringify(candidates)).to.deep.equal([...ranks].sort((a, b) => a - b));
      for (const candidate of candidates) {
        expect(
          await playwrightLocator(check, candidate).count(),
          `${step.otp.action} ${JSON.stringify(candidate)}`,
        ).to.equal(1);
      }
    }
    await check.close();

    // What the service stored: the same steps, and never the secret text.
    const stored = await svc.request('GET', `/otp/recordings/${recorder.recordingId}`);
    expect(stored.body.events.map((e: any) => e.step)).to.deep.equal(steps);
    const sent = JSON.stringify(stored.body);
    expect(sent).not.to.contain('hunter2');
    expect(sent).not.to.contain('4111');

    const result = await recorder.stop();
    expect(result.testCaseId).to.match(/^tc_/);
    const testCase = await svc.request('GET', `/tests/cases/${result.testCaseId}`);
    expect(testCase.body.title).to.equal('Sign in');
    expect(testCase.body.steps).to.deep.equal(steps);
  });
});

describe('Recorder: a recording started and stopped over REST', function () {
  this.timeout(30_000);
  let svc: TestService;
  let pages: PageServer;

  before(async () => {
    [svc, pages] = await Promise.all([startTestService(), servePages()]);
  });
  after(async () => {
    await pages?.close();
    await svc?.stop();
  });

  it('waits for record.start from the service, opens its url, and ends with the REST stop', async () => {
    const waiting = startRecorder({ server: svc.otpUrl, key: svc.adminKey, wait: true, headed: false });
    // The recorder's session appears once it has said hello; start a recording on it.
    const sessionId = await eventually(async () => {
      const { body } = await svc.request('GET', '/otp/sessions');
      const id = body.items.find((s: any) => s.capabilities.record === true)?.id;
      expect(id).to.be.a('string');
      return id as string;
    });
    const started = await svc.request('POST', `/otp/sessions/${sessionId}/recordings`, {
      body: { title: 'About page', url: `${pages.origin}/login` },
    });
    expect(started.status).to.equal(201);
    const recorder = await waiting;
    expect(recorder.recordingId).to.equal(started.body.id);
    await recorder.page.waitForLoadState('load');
    const about = recorder.page.waitForURL(/\/about/);
    await mouseClick(recorder.page, 'a[href="/about"]');
    await about;
    await recorder.settle();

    const stopped = await svc.request('POST', `/otp/recordings/${started.body.id}/stop`);
    expect(stopped.status).to.equal(200);
    const result = await recorder.done;
    expect(result).to.include({
      recordingId: started.body.id,
      testCaseId: stopped.body.testCaseId,
      steps: 2,
      reason: 'stopped by request',
    });
    const testCase = await svc.request('GET', `/tests/cases/${result.testCaseId}`);
    expect(testCase.body.steps).to.deep.equal([
      { otp: { action: 'navigate', url: `${pages.origin}/login` } },
      {
        otp: {
          action: 'click',
          locator: {
            candidates: [
              { by: 'role', value: 'link', name: 'About', exact: true },
              { by: 'text', value: 'About', exact: true },
              { by: 'title', value: 'About us', exact: true },
              { by: 'css', value: 'body > p:nth-of-type(2) > a' },
            ],
          },
        },
      },
    ]);
    await recorder.stop();
  });
});
