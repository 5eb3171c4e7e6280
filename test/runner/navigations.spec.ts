// The main document's HTTP status in each step result (evidence.navigations): an error page's status,
// a page that never answers, a refused connection, and a navigation a passing click starts, reported
// by the next step with what it got. Real service, real runner, real Chromium.
import http from 'node:http';
import { expect } from 'chai';
import { type RunnerHarness, servePages, startHarness, step } from './harness.js';

describe('otp-runner: navigations and their HTTP status in the step evidence', function () {
  this.timeout(60_000);
  let h: RunnerHarness;
  let site: Awaited<ReturnType<typeof servePages>>;
  const hanging = new Set<http.ServerResponse>();

  before(async () => {
    site = await servePages({
      '/ok': '<!doctype html><title>Fine</title><a id="next" href="/slow?x=1">Next</a>',
      '/busy': (_req, res) =>
        res
          .writeHead(503, 'Service Temporarily Unavailable', { 'content-type': 'text/html' })
          .end('<title>503 Service Temporarily Unavailable</title>'),
      '/hang': (_req, res) => void hanging.add(res),
      '/slow': (_req, res) =>
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Slow</title>'), 300),
    });
    h = await startHarness();
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    await h?.stop();
    await site?.close();
  });

  it('reports the status of an error page, which the navigation itself does not fail on', async () => {
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/busy') }),
      step({ action: 'assert', kind: 'title', op: 'equals', expected: 'Shop' }, { timeoutMs: 500 }),
    ]);
    expect(run.steps[0].status).to.equal('pass');
    expect(run.steps[0].evidence.navigations).to.deep.equal([
      { url: site.url('/busy'), status: 503, statusText: 'Service Temporarily Unavailable' },
    ]);
    expect(run.steps[1].evidence.navigations).to.equal(undefined);
  });

  it('says a navigation had no first byte when the step ends waiting for it, and names a refused connection', async () => {
    const run = await h.run([step({ action: 'navigate', url: site.url('/hang') }, { timeoutMs: 800 })]);
    expect(run.steps[0].error.code).to.equal('E_TIMEOUT');
    expect(run.steps[0].evidence.navigations).to.deep.equal([
      { url: site.url('/hang'), error: 'no response: still waiting for the first byte' },
    ]);
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await h.run([step({ action: 'navigate', url: `http://127.0.0.1:${port}/gone` })], {
      allowedOrigins: [`http://127.0.0.1:${port}`],
    });
    expect(refused.steps[0].evidence.navigations).to.deep.equal([
      // Every connection goes through the run's gate (a SOCKS proxy): the browser says so in its error.
      { url: `http://127.0.0.1:${port}/gone`, error: 'net::ERR_SOCKS_CONNECTION_FAILED' },
    ]);
  });

  it('reports a navigation a passing click started once, with its status and without its query, never as unanswered', async () => {
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/ok') }),
      step({ action: 'click', locator: { by: 'css', value: '#next' } }),
      step({ action: 'assert', kind: 'title', op: 'equals', expected: 'Slow' }),
    ]);
    expect(run.status).to.equal('passed');
    const reported = run.steps.flatMap((s: any) => s.evidence?.navigations ?? []);
    expect(reported).to.deep.equal([
      { url: site.url('/ok'), status: 200, statusText: 'OK' },
      { url: site.url('/slow'), status: 200, statusText: 'OK' },
    ]);
  });
});
