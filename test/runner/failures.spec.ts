// What must fail fails, with the code and the facts the spec names; and the executor's rules hold:
// allowedOrigins, eval refused without --allow-eval, cancel mid-step, evidence, one fresh context per
// run (cookies), reconnecting after the socket drops. Real service, real runner, real Chromium.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocketServer } from 'ws';
import { perform } from '../../src/runner/actions.js';
import { Deadline } from '../../src/runner/deadline.js';
import { OriginGuard } from '../../src/runner/origins.js';
import { StepError } from '../../src/runner/step-error.js';
import { type RunnerHarness, servePages, startHarness, step } from './harness.js';
import { crossOriginPage, FRAME_PAGE, PLAN_PAGE } from './pages.js';

const COOKIE_PAGE = `<!doctype html><title>Cookies</title>
<label for="v">Value</label><input id="v"><button onclick="document.cookie = 'who=' + document.getElementById('v').value">Set</button>
<p id="cookie"></p><script>document.getElementById('cookie').textContent = document.cookie || 'none';</script>`;
const NOISY_PAGE = `<!doctype html><title>Noisy</title>
<button id="noisy" onclick="console.error('boom from console'); throw new Error('uncaught boom')">Noisy</button>`;

// Text the database cannot hold: a NUL in an attribute and in a console error, and a console error
// whose cut to the runner's limit (2000 characters) falls inside a surrogate pair.
const UNSTORABLE_PAGE = `<!doctype html><title>Unstorable</title>
<button id="log" onclick="console.error('nul\\u0000here'); console.error('x'.repeat(1999) + '\\u{1F600} tail')">Log</button>
<p id="v">v</p><script>document.getElementById('v').setAttribute('data-x', 'a\\u0000b');</script>`;

describe('otp-runner: failures, origins, eval, cancel, evidence, contexts, reconnects', function () {
  this.timeout(30_000);
  let h: RunnerHarness;
  let site: Awaited<ReturnType<typeof servePages>>;
  let other: { origin: string; requests: string[]; sockets: number; close(): Promise<void> };

  before(async () => {
    other = await otherOrigin();
    site = await servePages({
      '/': PLAN_PAGE,
      '/frame': FRAME_PAGE,
      '/cookie': COOKIE_PAGE,
      '/noisy': NOISY_PAGE,
      '/unstorable': UNSTORABLE_PAGE,
      '/cross': crossOriginPage(other.origin),
    });
    h = await startHarness({ maxParallel: 2 });
  });
  after(async () => {
    await h?.stop();
    await site?.close();
    await other?.close();
  });

  /** Another origin that counts what reaches it: requests and WebSocket connections. */
  async function otherOrigin() {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Elsewhere</title>');
    });
    const wss = new WebSocketServer({ server });
    const state = { sockets: 0 };
    wss.on('connection', () => state.sockets++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      requests,
      get sockets() {
        return state.sockets;
      },
      close: () =>
        new Promise<void>((resolve) => {
          wss.close();
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  }

  it('fails an assert that does not hold with E_ASSERT_FAILED and the observed actual, and stores a downloadable screenshot', async () => {
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/') }),
      step(
        {
          action: 'assert',
          kind: 'text',
          locator: { by: 'testid', value: 'heading' },
          op: 'equals',
          expected: 'Something else',
        },
        { timeoutMs: 400 },
      ),
    ]);
    expect(run.status).to.equal('failed');
    const failed = run.steps[1];
    expect(failed.status).to.equal('fail');
    expect(failed.error.code).to.equal('E_ASSERT_FAILED');
    expect(failed.actual).to.equal('Runner plan');
    expect(failed.usedLocator).to.deep.equal({ by: 'testid', value: 'heading' });
    // evidence onFail (the default): uploaded through POST /otp/evidence, downloadable through its signed link
    expect(failed.evidence.screenshotAssetId).to.match(/^ast_/);
    // A passed step gets no screenshot; its navigation's status is all its evidence holds.
    expect(run.steps[0].evidence, JSON.stringify(run.steps[0].evidence)).to.deep.equal({
      navigations: [{ url: site.url('/'), status: 200, statusText: 'OK' }],
    });
    const res = await fetch(`${h.t.service.restUrl}${failed.evidence.screenshotUrl}`, {
      headers: { authorization: `Bearer ${h.key}` },
    });
    expect(res.status).to.equal(200);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).to.equal('PNG');
  });

  it('reports E_LOCATOR_NOT_FOUND with every candidate tried and how many elements each matched', async () => {
    const candidates = [
      { by: 'testid', value: 'missing' },
      { by: 'css', value: 'li.item', nth: 5 },
    ];
    const single = { by: 'role', value: 'button', name: 'Nowhere' };
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'click', locator: { candidates } }, { timeoutMs: 400, continueOnFail: true, evidence: 'never' }),
      step({ action: 'click', locator: single }, { timeoutMs: 400, continueOnFail: true, evidence: 'never' }),
      step(
        { action: 'assert', kind: 'value', locator: single, expected: 'x' },
        { timeoutMs: 400, continueOnFail: true, evidence: 'never' },
      ),
    ]);
    const [, failed, click, assert] = run.steps;
    expect(failed.status).to.equal('fail');
    expect(failed.error.code).to.equal('E_LOCATOR_NOT_FOUND');
    expect(failed.error.triedLocators).to.deep.equal([
      { ...candidates[0], count: 0 },
      { ...candidates[1], count: 3 },
    ]);
    for (const s of [click, assert]) {
      expect(s.status).to.equal('fail');
      expect(s.error.code).to.equal('E_LOCATOR_NOT_FOUND');
      expect(s.error.triedLocators).to.deep.equal([{ ...single, count: 0 }]);
    }
  });

  it('reports E_TIMEOUT when the element is there but the action cannot complete within timeoutMs', async () => {
    const started = Date.now();
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'click', locator: { by: 'css', value: '#off' } }, { timeoutMs: 500, evidence: 'never' }),
    ]);
    const failed = run.steps[1];
    expect(failed.status).to.equal('error');
    expect(failed.error.code).to.equal('E_TIMEOUT');
    expect(failed.usedLocator).to.deep.equal({ by: 'css', value: '#off' });
    expect(failed.durationMs).to.be.within(450, 1500);
    expect(failed.evidence).to.equal(null); // evidence: never
    expect(Date.now() - started).to.be.lessThan(5000);
  });

  it('keeps to allowedOrigins: navigations, sub-resources and WebSockets to another origin are blocked', async () => {
    const run = await h.run(
      [
        step({ action: 'navigate', url: site.url('/cross') }, { continueOnFail: true }),
        step(
          { action: 'assert', kind: 'text', locator: { by: 'css', value: '#img' }, expected: 'blocked' },
          { continueOnFail: true },
        ),
        step(
          { action: 'assert', kind: 'text', locator: { by: 'css', value: '#ws' }, op: 'matches', expected: '^closed' },
          { continueOnFail: true },
        ),
        step({ action: 'click', locator: { by: 'css', value: '#away' } }, { continueOnFail: true }),
        step({ action: 'navigate', url: site.url('/cross') }, { continueOnFail: true }),
        step({ action: 'navigate', url: `${other.origin}/direct` }, { continueOnFail: true, evidence: 'never' }),
        step({ action: 'assert', kind: 'title', expected: 'Cross' }, { continueOnFail: true }),
      ],
      { allowedOrigins: [site.origin] },
    );
    const codes = run.steps.map((s: any) => s.error?.code ?? s.status);
    // 3: a click on a link to another origin; 5: a navigate step to another origin
    expect(codes).to.deep.equal([
      'pass',
      'pass',
      'pass',
      'E_NAVIGATION_BLOCKED',
      'pass',
      'E_NAVIGATION_BLOCKED',
      'pass',
    ]);
    expect(run.steps[3].status).to.equal('fail');
    expect(other.requests, 'nothing reached the other origin').to.deep.equal([]);
    expect(other.sockets).to.equal(0);
  });

  it('never runs eval without --allow-eval: the service skips it (E_CAPABILITY) and the runner refuses it', async () => {
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'eval', script: 'document.title = "changed"' }),
      step({ action: 'assert', kind: 'title', expected: 'Runner plan' }),
    ]);
    expect(run.steps.map((s: any) => s.status)).to.deep.equal(['pass', 'skip', 'pass']);
    expect(run.steps[1].error.code).to.equal('E_CAPABILITY');
    expect(run.status).to.equal('passed');
    // Should a server send it anyway, the runner itself refuses to run the script.
    const context = await h.runner.browser.newContext();
    try {
      const page = await context.newPage();
      const env = {
        page,
        deadline: new Deadline(1000),
        guard: new OriginGuard([]),
        allowEval: false,
        download: async () => {
          throw new Error('none');
        },
      };
      const err = await perform({ action: 'eval', script: 'window.ran = true' }, env).then(
        () => undefined,
        (e) => e,
      );
      expect(err).to.be.instanceOf(StepError);
      expect((err as StepError).code).to.equal('E_CAPABILITY');
      expect(await page.evaluate('window.ran')).to.equal(undefined);
    } finally {
      await context.close();
    }
  });

  it('stops the step in flight at once on cancel', async () => {
    const { runId, finished } = await h.start([
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'wait', locator: { by: 'css', value: '#never' }, state: 'visible' }, { timeoutMs: 20_000 }),
    ]);
    const results: number[] = [];
    h.runner.on('result', (id, r) => id === runId && results.push(r.stepIndex));
    await new Promise<void>((resolve) => h.runner.on('step', (id, index) => id === runId && index === 1 && resolve()));
    const [context] = h.runner.browser.contexts();
    const contextClosed = new Promise((resolve) => context!.once('close', resolve));
    const cancelledAt = Date.now();
    const cancel = await h.t.request('POST', `/otp/runs/${runId}/cancel`, { key: h.key });
    expect(cancel.status).to.equal(200);
    const run = await finished;
    expect(run.status).to.equal('cancelled');
    expect(run.steps[1]).to.include({ status: 'skip' });
    expect(run.steps[1].error.code).to.equal('E_CANCELLED');
    // The run's context is closed under the step: well before the step's own 20 s.
    await contextClosed;
    expect(Date.now() - cancelledAt).to.be.lessThan(3000);
    expect(results).to.deep.equal([0]);
  });

  it('collects console errors and page errors per step, and stores evidence always when asked', async () => {
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/noisy') }, { evidence: 'always' }),
      step({ action: 'click', locator: { by: 'css', value: '#noisy' } }),
      step({ action: 'assert', kind: 'title', expected: 'Noisy' }),
    ]);
    expect(run.status).to.equal('passed');
    expect(run.steps[0].evidence.screenshotAssetId).to.match(/^ast_/);
    const seen = [...(run.steps[1].evidence?.consoleErrors ?? []), ...(run.steps[2].evidence?.consoleErrors ?? [])];
    expect(seen.some((e: string) => e.includes('boom from console'))).to.equal(true);
    expect(seen.some((e: string) => e.includes('uncaught boom'))).to.equal(true);
    expect(run.steps[0].evidence.consoleErrors).to.equal(undefined);
  });

  it('sends text the database cannot hold with U+FFFD in its place, says so, and its verdict is kept', async () => {
    const sent: any[] = [];
    const onResult = (_runId: string, payload: unknown) => sent.push(payload);
    h.runner.on('result', onResult);
    const run = await h.run([
      step({ action: 'navigate', url: site.url('/unstorable') }),
      step({ action: 'click', locator: { by: 'css', value: '#log' } }),
      step(
        {
          action: 'assert',
          kind: 'attribute',
          attribute: 'data-x',
          locator: { by: 'css', value: '#v' },
          expected: 'ab',
        },
        { continueOnFail: true },
      ),
    ]);
    expect(run.status).to.equal('failed');
    const [, click, assert] = run.steps;
    expect(click.status).to.equal('pass');
    expect(click.evidence.consoleErrors).to.deep.equal(['nul\ufffdhere', `${'x'.repeat(1999)}\ufffd`]);
    expect(click.textReplaced).to.deep.equal(['evidence.consoleErrors']);
    // The assert's own verdict (not a time-out): the observed value, cleaned.
    expect(assert).to.deep.include({ status: 'fail', source: 'executor', actual: 'a\ufffdb' });
    expect(assert.error).to.deep.include({ code: 'E_ASSERT_FAILED' });
    expect(assert.error.message).to.contain('got "a\ufffdb"');
    expect(assert.textReplaced).to.deep.equal(['actual', 'error.message']);
    expect(run.steps[0].textReplaced).to.equal(null);
    // Cleaned by the runner itself, before sending: the frames it sent hold no such text.
    h.runner.off('result', onResult);
    expect(sent.map((p) => p.textReplaced)).to.deep.equal([
      undefined,
      ['evidence.consoleErrors'],
      ['actual', 'error.message'],
    ]);
    expect(sent[2].actual).to.equal('a\ufffdb');
  });

  it("gives each run its own fresh context: two parallel runs do not see each other's cookies", async () => {
    const cookieRun = (value: string) => [
      step({ action: 'navigate', url: site.url('/cookie') }),
      step({ action: 'type', locator: { by: 'label', value: 'Value' }, text: value }),
      step({ action: 'click', locator: { by: 'role', value: 'button', name: 'Set' } }),
      step({ action: 'wait', ms: 400 }),
      step({ action: 'navigate', url: site.url('/cookie') }),
      step(
        { action: 'assert', kind: 'text', locator: { by: 'css', value: '#cookie' }, expected: `who=${value}` },
        { timeoutMs: 500 },
      ),
    ];
    const [a, b] = await Promise.all([h.start(cookieRun('alpha')), h.start(cookieRun('beta'))]);
    const [runA, runB] = await Promise.all([a.finished, b.finished]);
    expect([runA.status, runB.status, runA.steps[5].actual, runB.steps[5].actual]).to.deep.equal([
      'passed',
      'passed',
      'who=alpha',
      'who=beta',
    ]);
    // They did overlap in time (the session takes two at once).
    expect(Date.parse(runA.startedAt)).to.be.lessThan(Date.parse(runB.finishedAt));
    expect(Date.parse(runB.startedAt)).to.be.lessThan(Date.parse(runA.finishedAt));
    const later = await h.run([
      step({ action: 'navigate', url: site.url('/cookie') }),
      step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#cookie' }, expected: 'none' }),
    ]);
    expect(later.status).to.equal('passed');
  });

  it('resumes its session after its socket drops mid-step: the run passes, each step performed and recorded once', async () => {
    const first = h.runner.sessionId!;
    const started: number[] = [];
    const onStep = (_runId: string, stepIndex: number) => started.push(stepIndex);
    h.runner.on('step', onStep);
    // The drop comes while step 1 (a wait) is in flight: its result goes out after the resume.
    const dropped = new Promise<void>((resolve) =>
      h.runner.on('step', (_runId, stepIndex) => {
        if (stepIndex === 1) {
          h.runner.dropConnection();
          resolve();
        }
      }),
    );
    const resumed = new Promise<string>((resolve) => h.runner.on('welcome', resolve));
    const { finished } = await h.start([
      step({ action: 'navigate', url: site.url('/') }),
      step({ action: 'wait', ms: 300 }),
      step({ action: 'assert', kind: 'title', expected: 'Runner plan' }),
    ]);
    await dropped;
    expect(await resumed).to.equal(first);
    const run = await finished;
    h.runner.off('step', onStep);
    expect(run.status).to.equal('passed');
    expect(run.sessionId).to.equal(first);
    expect(run.steps.map((s: any) => s.status)).to.deep.equal(['pass', 'pass', 'pass']);
    expect(started, 'each step performed once').to.deep.equal([0, 1, 2]);
    const session = await h.t.request('GET', `/otp/sessions/${first}`, { key: h.key });
    expect(session.body.status).to.equal('open');
  });
});
