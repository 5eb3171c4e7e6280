// PostgreSQL goes away under a fleet: 8 executors, 16 runs of 30 steps in flight, one or two service
// processes on a real PostgreSQL server that this test stops and starts (a fast restart, a 30 s stop,
// and a stop longer than the outage window). Runs hold and go on where they stopped; REST answers 503
// with Retry-After meanwhile; the logs stay one JSON object per line and speak of the outage once.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import WebSocket from 'ws';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { freePort } from '../../src/free-port.js';
import { eventually } from '../support/eventually.js';
import { type ServiceProcess, spawnService } from '../support/process.js';
import { ResumingExecutor } from '../support/resuming-executor.js';

const KEY = 'svc_pk_database_outage_key_0123456789abcdefghij';
const EXECUTORS = 8;
const PARALLEL = 2;
const RUNS = 16;
const STEPS = 30;
const STEP_MS = 80;

interface Outage {
  /** ms without a database; 0: a fast restart (stop, then start at once). */
  stopMs: number;
  processes: number;
  windowMs?: number;
}

const percentile = (values: number[], p: number) => {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

describe('a PostgreSQL outage under a fleet', function () {
  this.timeout(240_000);
  let dataDir: string;
  let port: number;
  let server: EmbeddedServer | undefined;
  let adminUrl: string;
  const processes: ServiceProcess[] = [];
  const fleet: ResumingExecutor[] = [];

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-outage-'));
    port = await freePort();
    server = await startEmbeddedPostgres(dataDir, { port, database: 'postgres' });
    adminUrl = server.url;
  });
  afterEach(async () => {
    for (const e of fleet.splice(0)) e.close();
    for (const p of processes.splice(0)) await p.stop('SIGKILL');
  });
  after(async () => {
    await server?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function freshDatabase(): Promise<string> {
    const name = `otp_outage_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  const finishedCount = () => fleet.reduce((n, e) => n + e.finished.size, 0);
  const performedCount = () => fleet.reduce((n, e) => n + e.performed.size, 0);

  async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await Promise.race(fleet.map((e) => e.finishedCount(e.finished.size + 1, 200).catch(() => {})));
    }
  }

  /** A REST read during the outage: how long it took, its status, Retry-After and body. */
  async function readDuringOutage(service: ServiceProcess, runId: string) {
    const started = Date.now();
    const res = await fetch(`${service.restUrl}/api/v1/otp/runs/${runId}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    return {
      ms: Date.now() - started,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.text(),
    };
  }

  /** A new executor during the outage: what it is told, and how its socket closes. */
  async function helloDuringOutage(service: ServiceProcess): Promise<{ frame: any; close: number }> {
    const ws = new WebSocket(`${service.wsUrl}/otp`, { headers: { authorization: `Bearer ${KEY}` } });
    let frame: any;
    ws.on('message', (data) => (frame ??= JSON.parse(data.toString())));
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          otp: '1.0',
          id: 'msg_outage_hello',
          ts: new Date().toISOString(),
          type: 'hello',
          payload: { executor: 'runner', name: 'late', capabilities: {} },
        }),
      ),
    );
    const close = await new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    return { frame, close };
  }

  async function scenario(outage: Outage) {
    const url = await freshDatabase();
    const password = decodeURIComponent(new URL(url).password);
    for (let i = 0; i < outage.processes; i += 1) {
      processes.push(
        await spawnService({
          DATA_DIR: path.join(dataDir, `svc${i}`),
          DATABASE_URL: url,
          SVC_BOOTSTRAP_KEY: KEY,
          HEARTBEAT_MS: '500',
          INSTANCE_TIMEOUT_MS: '5000',
          ORPHAN_CHECK_MS: '2000',
          ...(outage.windowMs ? { OTP_OUTAGE_WINDOW_MS: String(outage.windowMs) } : {}),
        }),
      );
    }
    const api = `${processes[0]!.restUrl}/api/v1`;
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${api}${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.clone().text()).to.be.oneOf([200, 201, 202]);
      return res.json();
    };
    const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };
    const testCase = await post('/tests/cases', { title: 'outage', steps: Array(STEPS).fill(click) });
    for (let i = 0; i < EXECUTORS; i += 1) {
      const service = processes[i % processes.length]!;
      fleet.push(
        new ResumingExecutor({ key: KEY, url: () => `${service.wsUrl}/otp`, maxParallel: PARALLEL, stepMs: STEP_MS }),
      );
    }
    await Promise.all(fleet.map((e) => e.connect()));
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i += 1) runIds.push((await post('/otp/runs', { testCaseIds: [testCase.id] })).runId);

    // Every run is in flight, a few steps in: take the database away.
    await until('runs in flight', () => performedCount() >= RUNS * 4, 60_000);
    const outageStart = Date.now();
    await server!.stop();
    server = undefined;
    const reads = await Promise.all(processes.map((p) => readDuringOutage(p, runIds[0]!)));
    const hellos = await Promise.all(processes.map((p) => helloDuringOutage(p)));
    if (outage.stopMs) await new Promise((resolve) => setTimeout(resolve, outage.stopMs));
    server = await startEmbeddedPostgres(dataDir, { port, database: 'postgres' });
    const recoveredAt = Date.now();

    await until(`${RUNS} runs to finish`, () => finishedCount() >= RUNS, 120_000);
    // The verdicts are written as soon as the database is back: no run is left running.
    type RunRow = { id: string; status: string; passed: number; reason: string | null };
    const rows = await eventually(
      async () => {
        const found = await query<RunRow>(url, 'SELECT id, status, passed, reason FROM otp_runs WHERE id = ANY($1)', [
          runIds,
        ]);
        expect(found.filter((r) => r.status === 'running').map((r) => r.id)).to.deep.equal([]);
        return found;
      },
      10_000,
      100,
    );
    const steps = await query<{
      run_id: string;
      step_index: number;
      status: string;
      source: string;
      finished_at: Date;
      duration_ms: number | null;
      error: { code?: string } | null;
    }>(
      url,
      'SELECT run_id, step_index, status, source, finished_at, duration_ms, error FROM otp_run_steps WHERE run_id = ANY($1) ORDER BY run_id, step_index',
      [runIds],
    );

    // The service's cost of each step: the time between two results of a run, less the executor's own.
    const gaps = { before: [] as number[], after: [] as number[] };
    let firstAfter = Infinity;
    for (let i = 1; i < steps.length; i += 1) {
      const [prev, cur] = [steps[i - 1]!, steps[i]!];
      if (prev.run_id !== cur.run_id || !prev.finished_at || !cur.finished_at || cur.source !== 'executor') continue;
      const at = cur.finished_at.getTime();
      if (at > recoveredAt) firstAfter = Math.min(firstAfter, at);
      const gap = at - prev.finished_at.getTime() - (cur.duration_ms ?? 0);
      if (at < outageStart) gaps.before.push(gap);
      else if (at > recoveredAt + 2_000) gaps.after.push(gap);
    }
    const finished = fleet.flatMap((e) => [...e.finished.values()]);
    const performedTwice = fleet.flatMap((e) => [...e.performed.entries()]).filter(([, n]) => n !== 1);
    const logs = processes.flatMap((p) => p.stderr().split('\n').filter(Boolean));
    return {
      url,
      password,
      runIds,
      rows,
      steps,
      reads,
      hellos,
      finished,
      performedTwice,
      logs,
      outageStart,
      recoveredAt,
      firstAfter,
      gaps,
    };
  }

  function expectCleanLogs(logs: string[], password: string) {
    const isJson = (line: string) => {
      try {
        JSON.parse(line);
        return true;
      } catch {
        return false;
      }
    };
    const bad = logs.filter(
      (line) =>
        !isJson(line) ||
        line.includes(password) ||
        line.includes('postgres://') ||
        /\bselect\b.*\bfrom\b/i.test(line) ||
        line.includes('    at '),
    );
    expect(
      bad.map((line) => line.slice(0, 400)),
      'log lines that are not JSON or carry SQL, a stack or a connection string',
    ).to.deep.equal([]);
    // While it lasts, the outage is spoken of once (its start, its end), not by every failed attempt.
    // No error line but the one that says it began (runs, sessions and requests keep their own info lines).
    const during = logs.filter(
      (line) => line.includes('"level":"error"') && !line.includes('"msg":"database unavailable"'),
    );
    expect(
      during.map((line) => line.slice(0, 300)),
      "error lines besides the outage's start",
    ).to.deep.equal([]);
  }

  function expectHonestReads(
    reads: Array<{ ms: number; status: number; retryAfter: string | null; body: string }>,
    password: string,
  ) {
    for (const read of reads) {
      expect(read.status, read.body).to.equal(503);
      expect(read.ms, 'answered within a second').to.be.below(1_000);
      expect(Number(read.retryAfter)).to.be.greaterThan(0);
      expect(JSON.parse(read.body).error.code).to.equal('database_unavailable');
      expect(read.body).to.not.include(password);
      expect(read.body).to.not.include(`${port}`);
    }
  }

  for (const outage of [
    { stopMs: 0, processes: 1 },
    { stopMs: 0, processes: 2 },
    { stopMs: 30_000, processes: 1 },
    { stopMs: 30_000, processes: 2 },
  ]) {
    const what = outage.stopMs ? `a ${outage.stopMs / 1000} s stop` : 'a fast restart';
    it(`${what}, ${outage.processes} process${outage.processes > 1 ? 'es' : ''}: every run passes, no result lost, no step performed twice`, async () => {
      const r = await scenario(outage);
      expect(
        r.finished.map((f) => f.status),
        'run.finished told to the executors',
      ).to.deep.equal(Array(RUNS).fill('passed'));
      expect(
        r.rows.filter((row) => row.status !== 'passed'),
        'runs that did not pass',
      ).to.deep.equal([]);
      expect(r.rows.every((row) => row.passed === STEPS)).to.equal(true);
      const executorPasses = r.steps.filter((s) => s.status === 'pass' && s.source === 'executor').length;
      expect(executorPasses, 'acknowledged results kept').to.equal(RUNS * STEPS);
      expect(r.performedTwice, 'steps performed more than once').to.deep.equal([]);
      for (const hello of r.hellos) {
        expect(hello.close, 'a hello during the outage: try again later').to.equal(1013);
        expect(hello.frame.type).to.equal('error');
        expect(hello.frame.payload.code).to.equal('E_DATABASE_UNAVAILABLE');
        expect(hello.frame.payload.details).to.deep.include({ retryable: true });
      }
      expectHonestReads(r.reads, r.password);
      expectCleanLogs(r.logs, r.password);
      // One line as the outage begins and one as it ends, per process; nothing per attempt.
      expect(r.logs.filter((l) => l.includes('"database unavailable"'))).to.have.length(outage.processes);
      const ended = r.logs.filter((l) => l.includes('"database available again"')).map((l) => JSON.parse(l));
      expect(ended).to.have.length(outage.processes);
      const firstStepMs = r.firstAfter - r.recoveredAt;
      console.log(
        `      ${what}, ${outage.processes} process(es): ${RUNS}/${RUNS} passed, 0 results lost, ${r.performedTwice.length} steps twice; ` +
          `REST ${r.reads.map((x) => `${x.status} in ${x.ms} ms`).join(', ')}; runs held ${ended.map((e) => e.runsHeld).join('+')}, outage ${ended.map((e) => e.outageMs).join('/')} ms; ` +
          `first step ${firstStepMs} ms after recovery; step p99 ${percentile(r.gaps.before, 99).toFixed(0)} ms before, ${percentile(r.gaps.after, 99).toFixed(0)} ms after`,
      );
    });
  }

  it('a stop longer than the window: runs end E_DATABASE_UNAVAILABLE, told at once, written as soon as the database is back', async () => {
    const r = await scenario({ stopMs: 8_000, processes: 1, windowMs: 3_000 });
    expect(r.finished).to.have.length(RUNS);
    for (const f of r.finished as Array<{ status: string; reason?: string }>) {
      expect(f.status).to.equal('error');
      expect(f.reason).to.match(/database was unavailable for more than 3 s/);
    }
    // Written within seconds of the database's return, not by the orphan check.
    expect(r.rows.map((row) => row.status)).to.deep.equal(Array(RUNS).fill('error'));
    const skipped = r.steps.filter((s) => s.status === 'skip');
    expect(skipped.length).to.be.greaterThan(0);
    expect(new Set(skipped.map((s) => s.error?.code))).to.deep.equal(new Set(['E_DATABASE_UNAVAILABLE']));
    expect(r.performedTwice).to.deep.equal([]);
    expectCleanLogs(r.logs, r.password);
  });
});
