// What an operator sees: structured log lines at info for sessions, runs, refused keys and slow
// requests; Prometheus metrics on the metrics listener, in the text format, that move when a run
// passes; /healthz and /readyz (503 while draining).
import { expect } from 'chai';
import type { Logger } from '../../src/log.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

/**
 * The Prometheus text format (0.0.4): HELP and TYPE comments, then `name{labels} value` samples; the
 * value is a Go float (NaN and Inf in any case: prom-client writes an empty histogram's mean as `Nan`).
 */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  const SAMPLE =
    /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)( -?[0-9]+)?$/i;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        expect(['counter', 'gauge', 'histogram', 'summary', 'untyped'], line).to.include(comment[3]);
        expect(types.has(comment[2]!), `second TYPE for ${comment[2]}`).to.equal(false);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const sample = SAMPLE.exec(line);
    expect(sample, `not a sample line: ${line}`).to.not.equal(null);
    const name = sample![1]!;
    const family = [...types.keys()].find(
      (t) =>
        name === t ||
        (name.startsWith(`${t}_`) && ['_bucket', '_sum', '_count', '_total', '_created'].some((s) => name === t + s)),
    );
    expect(family, `sample ${name} before its TYPE`).to.not.equal(undefined);
    samples.set(`${name}${sample![2] ?? ''}`, Number(sample![3]));
  }
  return samples;
}

describe('Observability: logs, metrics, health', () => {
  let t: TestService;
  const lines: Line[] = [];
  const waiters: Array<() => void> = [];
  const push = (line: Line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  };
  const capture: Logger = {
    info: (msg, fields = {}) => push({ level: 'info', msg, fields }),
    debug: () => {},
    error: (msg, fields = {}) => push({ level: 'error', msg, fields }),
  };
  /** The first line logged with `msg` matching, now or when it comes. */
  async function line(msg: string, match: (f: Record<string, unknown>) => boolean): Promise<Line> {
    for (;;) {
      const found = lines.find((l) => l.msg === msg && match(l.fields));
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  }
  before(async () => {
    t = await startTestService(
      {
        metricsPort: 0,
        slowRequestMs: 0,
        limits: { requestsPerMinute: 30 },
        otp: { keepaliveSec: 1, pongTimeoutMs: 200 },
      },
      { log: capture },
    );
  });
  after(async () => t?.stop());

  const logged = (msg: string, match: (f: Record<string, unknown>) => boolean = () => true) =>
    lines.filter((l) => l.msg === msg && match(l.fields));
  const scrape = async () => {
    const res = await fetch(`${t.service.metricsUrl}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  };
  const value = (m: Map<string, number>, key: string) => m.get(key) ?? 0;

  /** An executor that answers pings (keepalive is 1 s here). */
  async function executor(key: string) {
    const e = await TestExecutor.connect(t.otpUrl, { key });
    e.ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString());
      if (frame.type === 'ping') e.send('pong', {}, { ref: frame.id });
    });
    await e.hello();
    return e;
  }

  it('counts and logs a run that passes: session, claim, steps, verdict, REST latency', async () => {
    const { key, projectId } = await t.newProject('admin');
    const before = await scrape();
    const e = await executor(key);
    const testCase = (
      await t.request('POST', '/tests/cases', {
        key,
        body: {
          title: 'one',
          steps: [
            { otp: { action: 'navigate', url: 'https://a.test/' } },
            { otp: { action: 'navigate', url: 'https://a.test/b' } },
          ],
        },
      })
    ).body.id;
    const runId = (await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [testCase] } })).body.runId;
    e.result(await e.next('step.exec'), 'pass');
    e.result(await e.next('step.exec'), 'pass');
    expect((await e.next('run.finished')).payload.status).to.equal('passed');
    const after = await scrape();

    expect(value(after, 'otp_runs_claimed_total') - value(before, 'otp_runs_claimed_total')).to.equal(1);
    expect(
      value(after, 'otp_runs_finished_total{status="passed"}') -
        value(before, 'otp_runs_finished_total{status="passed"}'),
    ).to.equal(1);
    expect(value(after, 'otp_sessions_opened_total') - value(before, 'otp_sessions_opened_total')).to.equal(1);
    expect(value(after, 'otp_sessions_open')).to.be.at.least(1);
    // The adapter this process carries OTP on, and only that one.
    expect(value(after, `otp_transport_info{transport="${t.service.transport}"}`)).to.equal(1);
    expect([...after.keys()].filter((k) => k.startsWith('otp_transport_info{'))).to.have.length(1);
    // Step 1 is dispatched after step 0's result; step 1's outcome goes with the verdict.
    expect(
      value(after, 'otp_step_dispatch_seconds_count') - value(before, 'otp_step_dispatch_seconds_count'),
    ).to.be.at.least(1);
    expect(
      value(after, 'otp_step_write_batch_rows_count') - value(before, 'otp_step_write_batch_rows_count'),
    ).to.be.at.least(1);
    expect(value(after, 'otp_step_write_seconds_count')).to.be.at.least(1);
    expect(
      value(after, 'http_request_duration_seconds_count{method="POST",route="/api/v1/otp/runs",status="202"}'),
    ).to.be.at.least(1);
    expect(after.has('nodejs_eventloop_lag_p99_seconds')).to.equal(true);

    expect(logged('session opened', (f) => f.projectId === projectId)).to.have.length(1);
    expect(logged('run claimed', (f) => f.runId === runId)).to.have.length(1);
    const [finished] = logged('run finished', (f) => f.runId === runId);
    expect(finished?.fields).to.include({ status: 'passed', passed: 2, failed: 0, skipped: 0 });
    expect(finished?.fields.durationMs).to.be.a('number');
    expect(logged('slow request', (f) => f.route === '/api/v1/otp/runs' && f.method === 'POST')).to.have.length(1);
    e.close();
    const closed = await line('session closed', (f) => f.projectId === projectId);
    expect(closed.fields.code).to.equal(1005);
  });

  it('logs a session closed for a missed pong, with the reason', async () => {
    const { key, projectId } = await t.newProject('admin');
    const silent = await TestExecutor.connect(t.otpUrl, { key });
    await silent.hello();
    // It never answers the ping: the service closes it after keepalive + pong timeout.
    const { code } = await silent.closed;
    expect(code).to.equal(4408);
    const closed = await line('session closed', (f) => f.projectId === projectId);
    expect(closed.fields).to.include({ code: 4408, reason: 'keepalive timeout' });
  });

  it('logs refused credentials once per address a minute, and counts every refusal', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const refused = await TestExecutor.connect(t.otpUrl, { key: `svc_pk_unknown_${i}` });
      expect((await refused.closed).code).to.equal(4401);
      expect((await t.request('GET', '/tests/cases', { key: `svc_pk_unknown_${i}` })).status).to.equal(401);
    }
    const after = await scrape();
    expect(
      value(after, 'auth_refused_total{transport="otp"}') - value(before, 'auth_refused_total{transport="otp"}'),
    ).to.equal(3);
    expect(
      value(after, 'auth_refused_total{transport="rest"}') - value(before, 'auth_refused_total{transport="rest"}'),
    ).to.equal(3);
    expect(logged('refused credentials', (f) => f.transport === 'otp')).to.have.length(1);
    expect(logged('refused credentials', (f) => f.transport === 'rest')).to.have.length(1);
  });

  it('counts the requests the rate limit refuses', async () => {
    const { key } = await t.newProject('admin');
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await t.request('GET', '/platform/context', { key })).status);
    expect(statuses.filter((s) => s === 429)).to.have.length(2);
    const after = await scrape();
    expect(value(after, 'http_rate_limited_total') - value(before, 'http_rate_limited_total')).to.equal(2);
  });

  it('answers /healthz and /readyz on both listeners, and /readyz 503 while draining', async () => {
    for (const base of [t.service.restUrl, t.service.metricsUrl!]) {
      const health = await fetch(`${base}/healthz`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.deep.equal({ status: 'ok' });
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).to.equal(200);
      expect(await ready.json()).to.deep.equal({ status: 'ready', checks: { database: 'ok', draining: 'ok' } });
    }
    // /metrics is not on the public listener.
    expect((await fetch(`${t.service.restUrl}/metrics`)).status).to.equal(404);
    t.service.lifecycle.startDraining();
    const draining = await fetch(`${t.service.restUrl}/readyz`);
    expect(draining.status).to.equal(503);
    expect((await draining.json()).checks.draining).to.match(/^draining/);
    expect((await fetch(`${t.service.restUrl}/healthz`)).status).to.equal(200);
  });
});
