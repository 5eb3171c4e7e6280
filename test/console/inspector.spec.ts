// Inspecting the machines in a real headless Chromium against the real service: the drawings zoom and
// pan, a finished run can be scrubbed through transition by transition, a live run is followed within
// a second of each step.result until the reader scrubs back, a session's page follows its machine from
// ready to closed, and two runs are compared. Waits are for what the page shows, never for time.
import { expect } from 'chai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { answerPings, CHECKOUT_STEPS, newProject, type Project } from './seed.js';
import { signIn } from './sign-in.js';

describe('Console: inspecting the machines', function () {
  this.timeout(30_000);
  let t: TestService;
  let browser: Browser;
  let p: Project;
  let caseId: string;
  const problems: string[] = [];

  before(async () => {
    [t, browser] = await Promise.all([
      // A short keepalive: the session page shows pings and pongs within a test.
      startTestService({ otp: { stepGraceMs: 100, keepaliveSec: 1, resumeWindowMs: 10_000 } }),
      chromium.launch({ executablePath: '/usr/bin/chromium', headless: true }),
    ]);
    p = await newProject(t);
    caseId = await p.testCase('Checkout', CHECKOUT_STEPS);
  });
  after(async () => {
    await browser?.close();
    await t?.stop();
  });
  afterEach(() => expect(problems.splice(0)).to.deep.equal([]));

  // Every executor here answers its pings: the keepalive is short, and a loaded machine slows a test down.
  const executorNamed = async (name: string) => answerPings(await p.executor(name));

  async function signedIn(width = 1440, height = 900): Promise<Page> {
    const viewport = { width, height };
    return (await signIn({ browser, base: t.service.restUrl, key: p.key, problems, viewport })).page;
  }

  /** A run of the checkout case on `executor`, its steps answered with `results` (the rest left to it). */
  async function run(executor: TestExecutor, results: Array<'pass' | 'fail'>): Promise<string> {
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId], sessionId: executor.sessionId })).body
      .id as string;
    for (const status of results) executor.result(await executor.next('step.exec', (f) => f.runId === runId), status);
    return runId;
  }

  const current = (page: Page, viewport: string) =>
    page.$$eval(`${viewport} g.state.current`, (gs) => gs.map((g) => g.getAttribute('data-state')));

  it('zooms and pans a drawing with the buttons, Ctrl + wheel, dragging and the keyboard, and fits it again', async () => {
    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/machines`);
    const viewport = page.locator('#machine-run');
    await viewport.locator('svg').waitFor();
    const view = async () => {
      const [x, y, w, h] = (await viewport.locator('svg').getAttribute('viewBox'))!.split(' ').map(Number);
      return { x: x!, y: y!, w: w!, h: h!, scale: Number(await viewport.getAttribute('data-scale')) };
    };
    const width = Number(await viewport.locator('svg').getAttribute('data-width'));
    const fitted = await view();
    // Fitted to the width on open: the whole drawing across, at no less than 88% (labels stay readable).
    expect(fitted.x).to.be.at.most(0);
    expect(fitted.x + fitted.w).to.be.at.least(width - 1);
    expect(fitted.scale).to.be.at.least(0.88);
    const level = page.locator('[data-viewer]', { has: viewport }).locator('[data-zoom-level]');
    expect(await level.innerText()).to.equal(`${Math.round(fitted.scale * 100)}%`);

    await page.locator('[data-viewer]', { has: viewport }).getByRole('button', { name: 'Zoom in' }).click();
    const zoomedIn = (await view()).scale;
    expect(zoomedIn).to.be.closeTo(fitted.scale * 1.25, 0.01);
    // The label shows the scale the drawing has (data-scale is rounded; scale × 125 may round the other way).
    expect(await level.innerText()).to.equal(`${Math.round(zoomedIn * 100)}%`);

    // The drawing may be taller than what is left of the window under the page's header: in view first.
    await viewport.scrollIntoViewIfNeeded();
    const box = (await viewport.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -300);
    await page.keyboard.up('Control');
    await page.waitForFunction(
      (s) => Number(document.querySelector('#machine-run')!.getAttribute('data-scale')) > s + 0.01,
      fitted.scale * 1.25,
    );
    const zoomed = await view();

    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 120, box.y + box.height / 2 - 80, { steps: 4 });
    await page.mouse.up();
    const dragged = await view();
    expect(dragged.scale).to.equal(zoomed.scale);
    expect(dragged.x - zoomed.x).to.be.closeTo(120 / zoomed.scale, 1);
    expect(dragged.y - zoomed.y).to.be.closeTo(80 / zoomed.scale, 1);

    await viewport.focus();
    await page.keyboard.press('ArrowLeft');
    expect((await view()).x).to.be.closeTo(dragged.x - 60 / dragged.scale, 1);
    await page.keyboard.press('-');
    expect((await view()).scale).to.be.closeTo(dragged.scale / 1.25, 0.01);
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    expect((await view()).scale).to.be.closeTo(dragged.scale * 1.25, 0.01);
    await page.keyboard.press('0');
    expect(await view()).to.deep.equal(fitted);
    if (process.env.SCREENSHOTS)
      await page.screenshot({ path: `${process.env.SCREENSHOTS}/machines.png`, fullPage: true });
    await page.context().close();
  });

  it('scrubs a finished run transition by transition: the drawing shows each state, the edge just taken and the steps as they stood', async () => {
    const executor = await executorNamed('scrub-runner');
    const runId = await run(executor, ['pass', 'pass', 'fail']);
    await executor.next('run.finished', (f) => f.runId === runId);
    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/runs/${runId}`);
    await page.waitForSelector('#run-status .s-failed');
    const rows = await page.$$eval('.timeline tr.tr', (trs) =>
      trs.map((tr) => ({
        from: tr.getAttribute('data-from'),
        to: tr.getAttribute('data-to')!,
        event: tr.getAttribute('data-event')!,
      })),
    );
    expect(rows.map((r) => r.to)).to.deep.equal([
      'advancing',
      'running',
      'recording',
      'running',
      'recording',
      'running',
      'finishing',
      'done',
    ]);

    // The server marks the newest transition as the script does.
    const marks = () =>
      page.$$eval('#run-diagram .current, #run-diagram .visited, #run-diagram .taken, #run-diagram .just', (els) =>
        els
          .map(
            (el) =>
              `${el.getAttribute('data-state') ?? el.getAttribute('data-edge') ?? `${el.closest('[data-edge]')!.getAttribute('data-edge')}|${el.getAttribute('data-event')}`}:${el
                .getAttribute('class')!
                .split(' ')
                .filter((c) => ['current', 'visited', 'taken', 'just'].includes(c))
                .join(' ')}`,
          )
          .sort(),
      );
    const fragment = await (
      await fetch(`${t.service.restUrl}/console/f/runs/${runId}`, { headers: { authorization: `Bearer ${p.key}` } })
    ).text();
    await page.setContent(fragment);
    const fromServer = await marks();
    expect(fromServer).to.include('done:current');
    await page.goto(`${t.service.restUrl}/console/runs/${runId}`);
    await page.waitForSelector('.timeline tr.tr.sel');
    expect(await marks()).to.deep.equal(fromServer);
    // At the newest transition the case's outcome, as REST says it, heads its steps.
    expect(await page.locator('#steps tr.case-row .outcome').innerText()).to.equal('failed at step 3 (stepIndex 2)');

    await page.locator('.timeline').focus();
    await page.keyboard.press('Home');
    const seen: string[] = [];
    for (let i = 0; i < rows.length; i++) {
      if (i) await page.keyboard.press('ArrowRight');
      await page.waitForSelector(`.timeline tr.tr.sel[data-t="${i}"]`);
      const [state] = await current(page, '#run-diagram');
      seen.push(state!);
      const just = await page.$$eval('#run-diagram g.edge.just', (gs) => gs.map((g) => g.getAttribute('data-edge')));
      expect(just, `transition ${i + 1}`).to.deep.equal(
        rows[i]!.from === null ? [] : [`${rows[i]!.from}|${rows[i]!.to}`],
      );
      expect(await page.locator('[data-position]').innerText()).to.include(`#${i + 1} of ${rows.length}`);
      const then = await page.$$eval('#steps tr[data-step]', (trs) => trs.map((tr) => tr.getAttribute('data-then')));
      // After the step.exec of step 2 (transition 4): step 1 durable, step 2 in flight, the rest not sent.
      if (i === 3) expect(then).to.deep.equal(['done', 'inflight', 'waiting', 'waiting']);
      // After step 1's result (transition 3): decided, not yet durable.
      if (i === 2) expect(then[0]).to.equal('decided');
    }
    expect(seen).to.deep.equal(rows.map((r) => r.to));
    // Back with the slider to the start, then a row of the time line: a frame row chooses its transition.
    await page.$eval('[data-scrub]', (el) => {
      (el as HTMLInputElement).value = '0';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(await current(page, '#run-diagram')).to.deep.equal(['advancing']);
    await page.locator('.timeline tr.fr[data-frame="step.exec"]').nth(2).click();
    expect(await current(page, '#run-diagram')).to.deep.equal(['running']);
    expect(
      await page.$$eval('#steps tr[data-step]', (trs) => trs.map((tr) => tr.getAttribute('data-then'))),
    ).to.deep.equal(['done', 'done', 'inflight', 'waiting']);
    // The case's outcome is the run's as it now stands: not shown for an earlier moment.
    expect(await page.locator('#steps tr.case-row').count()).to.equal(1);
    expect(await page.locator('#steps tr.case-row .outcome').isVisible()).to.equal(false);
    executor.close();
    await page.context().close();
  });

  it('follows a live run within a second of each step.result, stops where the reader scrubs back, and follows again on request', async () => {
    const executor = await executorNamed('live-runner');
    const page = await signedIn();
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId], sessionId: executor.sessionId })).body
      .id as string;
    await page.goto(`${t.service.restUrl}/console/runs/${runId}`);
    // The step recorded, the next one sent (the machine back in `running`) and that newest transition chosen.
    const newestChosen = (step: number) =>
      page.waitForFunction(
        (i) => {
          const rows = [...document.querySelectorAll('.timeline tr.tr')];
          const newest = rows[rows.length - 1];
          return Boolean(
            document.querySelector(`#steps tr[data-step="${i}"][data-status="pass"]`) &&
              newest?.classList.contains('sel') &&
              newest.getAttribute('data-to') === 'running' &&
              document.querySelector('#run-diagram [data-state="running"].current'),
          );
        },
        step,
        { timeout: 1000 },
      );
    for (let i = 0; i < 2; i++) {
      const exec = await executor.next('step.exec', (f) => f.runId === runId);
      await page.waitForSelector(`#steps tr[data-step="${i}"][data-status="pending"]`);
      const sent = Date.now();
      executor.result(exec, 'pass');
      await newestChosen(i);
      expect(Date.now() - sent, `step ${i + 1} on the page`).to.be.below(1000);
      expect(await current(page, '#run-diagram')).to.deep.equal(['running']);
    }
    // The reader scrubs back: the page stays there while the run goes on.
    await page.locator('.timeline').focus();
    await page.keyboard.press('ArrowLeft');
    const chosen = await page.getAttribute('.timeline tr.tr.sel', 'data-t');
    expect(await page.getAttribute('[data-follow]', 'aria-pressed')).to.equal('false');
    executor.result(await executor.next('step.exec', (f) => f.runId === runId), 'pass');
    await page.waitForSelector('#steps tr[data-step="2"][data-status="pass"]');
    expect(await page.getAttribute('.timeline tr.tr.sel', 'data-t')).to.equal(chosen);
    expect(await page.locator('[data-position]').innerText()).to.include('scrubbed back');
    await page.locator('[data-follow]').click();
    const rows = await page.locator('.timeline tr.tr').count();
    expect(await page.getAttribute('.timeline tr.tr.sel', 'data-t')).to.equal(String(rows - 1));
    expect(await page.getAttribute('[data-follow]', 'aria-pressed')).to.equal('true');
    executor.result(await executor.next('step.exec', (f) => f.runId === runId), 'pass');
    await page.waitForSelector('#run-status .s-passed');
    // The verdict is read from PostgreSQL, the newest transition (written with it) may come a refresh later.
    await page.waitForSelector('#run-diagram [data-state="done"].current', { state: 'attached' });
    executor.close();
    await page.context().close();
  });

  it("shows a session's machine live: ready, busy, detached, resumed, closed and why, with its pings and pongs", async () => {
    const executor = await executorNamed('session-runner');
    const sessionId = executor.sessionId!;
    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/sessions`);
    await page.locator(`tr[data-session="${sessionId}"]`).getByRole('link', { name: 'session-runner' }).click();
    await page.waitForURL(`${t.service.restUrl}/console/sessions/${sessionId}`);
    const phase = (word: string) => page.waitForSelector(`#session-phase[data-phase="${word}"]`);
    await phase('ready');
    expect(await current(page, '#session-diagram')).to.deep.equal(['ready']);
    await page.waitForFunction(() =>
      /[1-9]\d* pings? sent, [1-9]\d* pongs?/.test(document.querySelector('#session-keepalive')!.textContent!),
    );

    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId], sessionId })).body.id as string;
    const exec = await executor.next('step.exec', (f) => f.runId === runId);
    await phase('busy');
    expect(await page.locator('#session-busy').innerText()).to.equal('1 of 2');
    expect(await page.locator(`#session-runs tr[data-run="${runId}"]`).count()).to.equal(1);

    // The socket drops: the session waits to be resumed.
    executor.terminate();
    await phase('detached');
    expect(await current(page, '#session-diagram')).to.deep.equal(['detached']);
    const resumed = answerPings(await TestExecutor.connect(t.otpUrl, { key: p.key }));
    await resumed.hello({ maxParallel: 2 }, { resumeSessionId: sessionId });
    const again = await resumed.next('step.exec', (f) => f.runId === runId);
    expect(again.id).to.equal(exec.id);
    await phase('busy');
    expect(await page.locator('#session-now').innerText()).to.include('Resumed');
    expect(
      await page.$$eval('.timeline tr.tr', (trs) => trs.map((tr) => tr.getAttribute('data-event'))),
    ).to.include.members(['SOCKET_CLOSED', 'RESUME']);
    resumed.result(again, 'pass');
    for (let i = 1; i < CHECKOUT_STEPS.length; i++)
      resumed.result(await resumed.next('step.exec', (f) => f.runId === runId), 'pass');
    await resumed.next('run.finished');
    await phase('ready');

    // The executor closes: the page says so, and why.
    resumed.ws.close(1000, 'work done');
    await phase('closed');
    // Why it closed, once the close is stored (the page hears of it again then).
    await page.waitForFunction(() => document.querySelector('#session-close')?.textContent?.includes('1000 work done'));
    expect(await current(page, '#session-diagram')).to.deep.equal(['closed']);
    expect(
      await page.$$eval('.timeline tr.tr', (trs) =>
        trs.map((tr) => `${tr.getAttribute('data-event')}:${tr.getAttribute('data-to')}`),
      ),
    ).to.deep.equal([
      'xstate.init:awaitingHello',
      'HELLO:registering',
      'SESSION_REGISTERED:ready',
      'SOCKET_CLOSED:detached',
      'RESUME:ready',
      'SOCKET_CLOSED:closed',
    ]);
    await page.context().close();
  });

  it('compares two runs of the same test case: their steps and paths side by side, the first difference marked', async () => {
    const executor = await executorNamed('compare-runner');
    const passed = await run(executor, ['pass', 'pass', 'pass', 'pass']);
    await executor.next('run.finished', (f) => f.runId === passed);
    const failed = await run(executor, ['pass', 'fail']);
    await executor.next('run.finished', (f) => f.runId === failed);
    const page = await signedIn();
    await page.goto(`${t.service.restUrl}/console/runs/${failed}`);
    await page.getByLabel('Compare with').selectOption(passed);
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.waitForURL(/\/console\/compare\?a=otr_[a-z0-9]+&b=otr_[a-z0-9]+/);
    await page.waitForSelector('#compare-steps tr[data-first-diff]');
    expect(await page.getAttribute('#compare-steps tr[data-first-diff]', 'data-step')).to.equal('1');
    expect(await page.locator('#compare-steps tr[data-first-diff]').innerText()).to.include('first difference');
    expect(await page.locator('#compare-summary').innerText())
      .to.match(/first differ at step 2 of “[^”]+” \(stepIndex 1\): A fail/)
      .and.include('B pass');
    // Both took running → recording; only the passed run went round it again after step 2.
    expect(await page.locator('#compare-diagram g.edge.path-ab[data-edge="running|recording"]').count()).to.equal(1);
    expect(await page.locator('.compare-paths tr[data-first-diff]').count()).to.equal(1);
    executor.close();
    await page.context().close();
  });
});
