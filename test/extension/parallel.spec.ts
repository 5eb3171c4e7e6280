// maxParallel: with "runs at once" set to 2 the extension declares it and takes two runs together,
// each in a window of its own; each run's page is its own (the counter of one does not move in the
// other), and both pass. The settings changed from the worker start a new session.
import { expect } from 'chai';
import { servePages, step } from '../runner/harness.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, finished, launchExtension, startOn } from './harness.js';

const PAGE = `<!doctype html><title>Own page</title>
<button id="more" onclick="document.getElementById('count').textContent = String(Number(document.getElementById('count').textContent) + 1)">More</button>
<p id="count">0</p>`;

describe('the extension: runs at once', function () {
  this.timeout(60_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let key: string;
  let projectId: string;
  let site: Awaited<ReturnType<typeof servePages>>;

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    site = await servePages({ '/': PAGE });
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key });
  });
  after(async () => {
    await ext?.close();
    await site?.close();
    await t?.stop();
  });

  it('takes two runs together when allowed two, each in a window of its own', async () => {
    const first = await ext.sessionId();
    await (await ext.worker()).evaluate(() => (globalThis as any).chrome.storage.local.set({ maxParallel: 2 }));
    // The change makes a new session.
    const sessionId = await ext.sessionId(first);
    const session = await t.request('GET', `/otp/sessions/${sessionId}`, { key });
    expect(session.body.capabilities).to.deep.include({ maxParallel: 2 });
    const clicks = (n: number) => [
      step({ action: 'navigate', url: site.url('/') }),
      ...Array.from({ length: n }, () => step({ action: 'click', locator: { by: 'css', value: '#more' } })),
      step({ action: 'wait', ms: 300 }),
      step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#count' }, expected: String(n) }),
    ];
    const [a, b] = await Promise.all([startOn(t, key, sessionId, clicks(2)), startOn(t, key, sessionId, clicks(3))]);
    const [runA, runB] = await Promise.all([
      finished(t, key, projectId, a.runId),
      finished(t, key, projectId, b.runId),
    ]);
    expect([runA.status, runB.status]).to.deep.equal(['passed', 'passed']);
    expect(Date.parse(runA.startedAt)).to.be.lessThan(Date.parse(runB.finishedAt));
    expect(Date.parse(runB.startedAt)).to.be.lessThan(Date.parse(runA.finishedAt));
  });
});
