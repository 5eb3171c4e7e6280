// What the extension cannot do says so in a step error with a clear code and message, never a hang:
// the run's tab closed by the user, the user's Cancel on the debugger bar (the run ends cancelled,
// through the service's REST cancel), a browser page (chrome://) no run may reach. Real service, real
// extension, real headless Chromium; the bar's Cancel, which headless Chromium cannot show, is stood
// in for by the very handler chrome.debugger.onDetach calls with reason canceled_by_user.
import { expect } from 'chai';
import { servePages, step } from '../runner/harness.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, finished, launchExtension, runOn, startOn } from './harness.js';

const LOADED_PAGE = `<!doctype html><title>Waiting</title><p>waiting</p><script>fetch('/loaded')</script>`;
/** A page that looks for the extension after it was driven: its engine's globals, a runtime to message. */
const PROBING_PAGE = `<!doctype html><title>Probing</title>
<button id="look" onclick="document.getElementById('seen').textContent = [typeof window.__otpEngine, typeof window.otpExtension, typeof (window.chrome && chrome.runtime && chrome.runtime.sendMessage)].join(',')">Look</button>
<p id="seen"></p>`;

describe('the extension: what it cannot do is said, never a hang', function () {
  this.timeout(60_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let key: string;
  let projectId: string;
  let site: Awaited<ReturnType<typeof servePages>>;
  const loads: Array<() => void> = [];

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    site = await servePages({
      '/probing': PROBING_PAGE,
      '/': LOADED_PAGE,
      '/loaded': (_req, res) => {
        for (const wake of loads.splice(0)) wake();
        res.writeHead(204).end();
      },
    });
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key });
  });
  after(async () => {
    await ext?.close();
    await site?.close();
    await t?.stop();
  });

  const loaded = () => new Promise<void>((resolve) => loads.push(resolve));
  /** The id of the tab showing the site (the run's tab). */
  const runTab = async () =>
    (await ext.worker()).evaluate(async (origin) => {
      const tabs = await (globalThis as any).chrome.tabs.query({});
      return tabs.find((tab: any) => String(tab.url).startsWith(origin)).id as number;
    }, site.origin);
  /** Resolves when the extension's worker has begun the run's wait step (step 1): the navigate is recorded. */
  const waitInFlight = async (runId: string) =>
    (await ext.worker()).evaluate(([r, i]) => (globalThis as any).otpExtension.stepStarted(r, i), [runId, 1] as const);
  const waiting = () => [
    step({ action: 'navigate', url: site.url('/') }),
    step({ action: 'wait', locator: { by: 'css', value: '#never' }, state: 'visible' }, { timeoutMs: 20_000 }),
    step({ action: 'assert', kind: 'title', expected: 'Waiting' }),
  ];

  it('errors the step in flight at once when the user closes the run’s tab, saying so', async () => {
    const page = loaded();
    const started = Date.now();
    const { runId } = await startOn(t, key, await ext.sessionId(), waiting());
    await page;
    // The page's script runs before the navigate step has answered: closed then, the tab would end
    // the run on step 0. The wait step is in flight once the worker has begun it.
    await waitInFlight(runId);
    const tabId = await runTab();
    await (await ext.worker()).evaluate((id) => (globalThis as any).chrome.tabs.remove(id), tabId);
    const run = await finished(t, key, projectId, runId);
    expect(run.steps[1]).to.deep.include({ status: 'error' });
    expect(run.steps[1].error).to.deep.include({ code: 'E_INTERNAL', message: "the run's tab was closed" });
    expect(run.steps[2].status).to.equal('skip');
    expect(Date.now() - started, 'well before the step’s own 20 s').to.be.lessThan(10_000);
  });

  it('cancels the run at the service when the user cancels the debugger', async () => {
    const page = loaded();
    const { runId } = await startOn(t, key, await ext.sessionId(), waiting());
    await page;
    await waitInFlight(runId);
    const tabId = await runTab();
    await (await ext.worker()).evaluate(
      (id) => (globalThis as any).otpExtension.debuggerDetached(id, 'canceled_by_user'),
      tabId,
    );
    const run = await finished(t, key, projectId, runId);
    expect(run.status).to.equal('cancelled');
    expect(run.steps[1]).to.deep.include({ status: 'skip' });
    expect(run.steps[1].error.code).to.equal('E_CANCELLED');
  });

  it('leaves nothing a page can find: the engine lives in an isolated world, no runtime to message', async () => {
    const run = await runOn(t, key, projectId, await ext.sessionId(), [
      step({ action: 'navigate', url: site.url('/probing') }),
      step({ action: 'click', locator: { by: 'role', value: 'button', name: 'Look' } }),
      step({
        action: 'assert',
        kind: 'text',
        locator: { by: 'css', value: '#seen' },
        expected: 'undefined,undefined,undefined',
      }),
    ]);
    expect(run.status, JSON.stringify(run.steps.map((s: any) => s.actual))).to.equal('passed');
  });

  it('says a frame of another origin cannot be reached, at once (E_INTERNAL, E_FRAME_UNREACHABLE)', async () => {
    const other = await servePages({ '/inner': '<!doctype html><button>Inside</button>' });
    try {
      const framed = await servePages({
        '/': `<!doctype html><title>Framed</title><iframe id="x" src="${other.url('/inner')}"></iframe>`,
      });
      try {
        const run = await runOn(
          t,
          key,
          projectId,
          await ext.sessionId(),
          [
            step({ action: 'navigate', url: framed.url('/') }),
            step(
              { action: 'click', locator: { by: 'role', value: 'button', name: 'Inside', frame: '#x' } },
              { timeoutMs: 10_000 },
            ),
          ],
          { allowedOrigins: [framed.origin, other.origin] },
        );
        expect(run.steps[1]).to.deep.include({ status: 'error' });
        expect(run.steps[1].error.code).to.equal('E_INTERNAL');
        expect(run.steps[1].error.message).to.match(
          /^E_FRAME_UNREACHABLE: the frame #x holds a page of another origin/,
        );
        expect(run.steps[1].durationMs, 'at once, not at the end of its 10 s').to.be.lessThan(5000);
      } finally {
        await framed.close();
      }
    } finally {
      await other.close();
    }
  });

  it('refuses a browser page (chrome://) as outside allowedOrigins, whatever the list says', async () => {
    const run = await runOn(
      t,
      key,
      projectId,
      await ext.sessionId(),
      [
        step({ action: 'navigate', url: site.url('/') }),
        step({ action: 'navigate', url: 'chrome://settings' }, { continueOnFail: true }),
        step({ action: 'assert', kind: 'title', expected: 'Waiting' }),
      ],
      { allowedOrigins: [site.origin, 'chrome://settings'] },
    );
    expect(run.steps.map((s: any) => s.error?.code ?? s.status)).to.deep.equal([
      'pass',
      'E_NAVIGATION_BLOCKED',
      'pass',
    ]);
    expect(run.steps[1].error.message).to.contain('chrome://settings');
  });
});
