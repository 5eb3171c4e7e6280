// A subset of the hostile page's ways out (test/runner/hostile.ts) against the extension: with the
// other origin B allowed every way reaches it (the attempt is real), with only A allowed nothing
// reaches B (B counts TCP connections, requests and WebSocket upgrades) and each way that leaves the
// page fails the step that caused it with E_NAVIGATION_BLOCKED naming B's URL.
import { expect } from 'chai';
import { type Counter, type Site, startCounter, startSite, WAYS, type Way } from '../runner/hostile.js';
import { plan } from '../runner/hostile-run.js';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, launchExtension, runOn } from './harness.js';

/** Redirects, popups, links and forms to the forbidden origin, and requests of the page through redirects. */
const EXTENSION_WAYS = (
  process.env.EXT_WAYS ??
  [
    'navigate-302',
    'navigate-307',
    'navigate-chain',
    'meta-refresh',
    'top-from-iframe',
    'location',
    'link',
    'form-post',
    'form-post-307',
    'window-open',
    'target-blank',
    'popup-redirect',
    'fetch',
    'img-redirect',
    'fetch-307',
    'iframe-redirect',
    'xhr',
    'beacon',
    'eventsource',
    'css-import',
    'link-prefetch',
    'websocket',
    'worker-fetch',
    'worker-websocket',
  ].join(',')
).split(',');

const codes = (run: any, from: number, count: number) =>
  run.steps.slice(from, from + count).map((s: any) => s.error?.code ?? s.status);

describe('the extension: allowedOrigins against a hostile page', function () {
  this.timeout(120_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let key: string;
  let projectId: string;
  let B: Counter;
  let site: Site;
  const ways: Way[] = WAYS.filter((w) => EXTENSION_WAYS.includes(w.name));

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    B = await startCounter();
    site = await startSite(B);
    ext = await launchExtension({ serviceUrl: t.service.restUrl, token: key });
  });
  after(async () => {
    await ext?.close();
    await site?.close();
    await B?.close();
    await t?.stop();
  });

  /** Resolves once the extension has closed every run window (the run's requests are over then). */
  const runWindowsClosed = async () =>
    (await ext.worker()).evaluate(async () => {
      const chrome = (globalThis as any).chrome;
      while ((await chrome.windows.getAll()).length > 1)
        await new Promise((resolve) => chrome.windows.onRemoved.addListener(resolve));
    });

  it('with B allowed, every way reaches B', async () => {
    const { steps, at } = plan(ways, site, B);
    site.awaiting = 'mark';
    site.outcomes.clear();
    B.reset();
    const run = await runOn(t, key, projectId, await ext.sessionId(), steps, {
      allowedOrigins: [site.origin, B.origin],
    });
    const problems: string[] = [];
    for (const way of ways) {
      const from = at.get(way.name)!;
      const n = way.steps(site.origin, B.origin).length;
      if (codes(run, from, n).some((c: string) => c !== 'pass'))
        problems.push(
          `${way.name}: ${JSON.stringify(run.steps.slice(from, from + n).map((s: any) => s.error?.message ?? s.status))}`,
        );
      if (way.mark !== 'none' && !(await B.arrived(way.mark, 0))) problems.push(`${way.name}: did not reach B`);
    }
    expect(problems, B.summary()).to.deep.equal([]);
  });

  it('with only A allowed, nothing reaches B, and each way out fails its step with E_NAVIGATION_BLOCKED', async () => {
    const { steps, at } = plan(ways, site, B);
    site.awaiting = 'nothing';
    site.outcomes.clear();
    B.reset();
    const run = await runOn(t, key, projectId, await ext.sessionId(), steps, { allowedOrigins: [site.origin] });
    await runWindowsClosed();
    expect(
      { connections: B.connections, requests: B.requests, upgrades: B.upgrades },
      'nothing reached B',
    ).to.deep.equal({
      connections: 0,
      requests: [],
      upgrades: [],
    });
    const problems: string[] = [];
    for (const way of ways) {
      const from = at.get(way.name)!;
      const n = way.steps(site.origin, B.origin).length;
      const got = codes(run, from, n);
      const blocked = got
        .map((c: string, i: number) => (c === 'E_NAVIGATION_BLOCKED' ? i : -1))
        .filter((i: number) => i >= 0);
      const wanted =
        way.kind === 'sub'
          ? []
          : way.blockedAt !== undefined
            ? [way.blockedAt]
            : blocked.length === 1
              ? blocked
              : ['one step'];
      const others = got.filter((c: string, i: number) => c !== 'pass' && !blocked.includes(i));
      const named = blocked.every((i: number) =>
        run.steps[from + i].error.message.includes(`${B.origin}/b/${way.name}`),
      );
      if (JSON.stringify(blocked) !== JSON.stringify(wanted) || others.length || !named)
        problems.push(
          `${way.name}: ${JSON.stringify(run.steps.slice(from, from + n).map((s: any) => (s.error ? `${s.error.code}: ${s.error.message}` : s.status)))}`,
        );
    }
    expect(problems).to.deep.equal([]);
  });
});
