// The extension's worker stopped in the middle of a run (CDP ServiceWorker.stopAllWorkers, which
// also cuts its socket): the worker starts again at the next browser event, resumes its session, and
// the run goes on in the same window; no step is performed twice (the page under test counts clicks,
// and tells the test of each). Also a socket cut alone, as by the network.
import { expect } from 'chai';
import { servePages, step } from '../runner/harness.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, finished, launchExtension, startOn } from './harness.js';

const COUNTER_PAGE = `<!doctype html><title>Counter</title>
<button id="more" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1); fetch('/clicked')">More</button>
<p id="count">0</p>`;

describe('the extension: a stopped worker and a cut socket', function () {
  this.timeout(90_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let key: string;
  let projectId: string;
  let site: Awaited<ReturnType<typeof servePages>>;
  const clicks: Array<() => void> = [];
  let clicked = 0;

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    site = await servePages({
      '/': COUNTER_PAGE,
      '/clicked': (_req, res) => {
        clicked++;
        for (const wake of clicks.splice(0)) wake();
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

  const nextClick = () => new Promise<void>((resolve) => clicks.push(resolve));
  const plan = () => [
    step({ action: 'navigate', url: site.url('/') }),
    step({ action: 'click', locator: { by: 'css', value: '#more' } }),
    step({ action: 'wait', ms: 1500 }),
    step({ action: 'click', locator: { by: 'css', value: '#more' } }),
    step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#count' }, expected: '2' }),
  ];

  it('goes on with the run after its worker is stopped mid-run and starts again; each step performed once', async () => {
    const sessionId = await ext.sessionId();
    clicked = 0;
    const first = nextClick();
    const { runId } = await startOn(t, key, sessionId, plan());
    // The first click is done and recorded: the wait step is in flight. Stop every service worker of the browser.
    await first;
    await (await ext.worker()).evaluate(([r, i]) => (globalThis as any).otpExtension.stepStarted(r, i), [
      runId,
      2,
    ] as const);
    await (await ext.worker()).evaluate(() => ((globalThis as any).before = 'the stop'));
    const page = await ext.context.newPage();
    const cdp = await ext.context.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // Any browser event the worker listens to starts it again; a tab the user opens is one.
    await (await ext.context.newPage()).close();
    expect(await ext.sessionId(), 'the same session, resumed').to.equal(sessionId);
    // A new worker: what the old one held in memory is gone.
    expect(await (await ext.worker()).evaluate(() => (globalThis as any).before)).to.equal(undefined);
    const run = await finished(t, key, projectId, runId);
    expect(run.status, JSON.stringify(run.steps.map((s: any) => s.error))).to.equal('passed');
    expect(run.steps[4].actual).to.equal('2');
    expect(clicked, 'each click performed once').to.equal(2);
    await page.close();
  });

  it('resumes after its socket alone is cut, and performs nothing twice', async () => {
    const sessionId = await ext.sessionId();
    clicked = 0;
    const first = nextClick();
    const { runId } = await startOn(t, key, sessionId, plan());
    await first;
    await (await ext.worker()).evaluate(([r, i]) => (globalThis as any).otpExtension.stepStarted(r, i), [
      runId,
      2,
    ] as const);
    await (await ext.worker()).evaluate(() => (globalThis as any).otpExtension.session.drop());
    expect(await ext.sessionId()).to.equal(sessionId);
    const run = await finished(t, key, projectId, runId);
    expect(run.status).to.equal('passed');
    expect(clicked).to.equal(2);
  });
});
