// A rolling restart under a fleet of executors: two real service processes on one PostgreSQL; the
// one the executors use gets SIGTERM with runs in flight and runs queued. Its executors are told to
// reconnect (4503), resume their sessions on the other process, and every run passes, each step
// performed once.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type ServiceProcess, spawnService } from '../support/process.js';
import { ResumingExecutor } from '../support/resuming-executor.js';

const KEY = 'svc_pk_rolling_restart_key_0123456789abcdefghij';
const EXECUTORS = 4;
const PARALLEL = 2;
const RUNS = 24;
const STEPS = 6;

describe('a rolling restart with runs in flight', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let dataDir: string;
  const processes: ServiceProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-rolling-'));
  });
  after(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    await database?.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const start = async (drainMs: number) => {
    const service = await spawnService({
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      SVC_BOOTSTRAP_KEY: KEY,
      HEARTBEAT_MS: '500',
      OTP_DRAIN_MS: String(drainMs),
      OTP_RESUME_WINDOW_MS: '20000',
    });
    processes.push(service);
    return service;
  };

  it('loses no run: every run passes, every step performed once, the drained process exits 0', async () => {
    // No drain period: every run in flight at SIGTERM moves to B mid-run (docs: "Draining").
    // One after the other: two first starts on one fresh database would race on the migrations.
    const a = await start(0);
    const b = await start(100);
    const api = `${a.restUrl}/api/v1`;
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${api}${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return res.json();
    };
    const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };
    const testCase = await post('/tests/cases', { title: 'rolling', steps: Array(STEPS).fill(click) });

    let drained = false;
    const fleet = Array.from(
      { length: EXECUTORS },
      () =>
        new ResumingExecutor({
          key: KEY,
          url: () => `${drained ? b.wsUrl : a.wsUrl}/otp`,
          maxParallel: PARALLEL,
          stepMs: 60,
        }),
    );
    await Promise.all(fleet.map((e) => e.connect()));
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i += 1) runIds.push((await post('/otp/runs', { testCaseIds: [testCase.id] })).runId);

    // Once the first run has passed, the others are in flight or queued: restart A.
    await Promise.race(fleet.map((e) => e.finishedCount(1, 30_000)));
    drained = true;
    const startedDrain = Date.now();
    const exitCode = a.stop('SIGTERM');
    const inFlightAtSigterm = RUNS - fleet.reduce((n, e) => n + e.finished.size, 0);

    const deadline = Date.now() + 60_000;
    while (fleet.reduce((n, e) => n + e.finished.size, 0) < RUNS) {
      if (Date.now() > deadline) {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client.query(
          "SELECT id, status, session_id, instance_id, reason FROM otp_runs WHERE status <> 'passed'",
        );
        await client.end();
        throw new Error(
          `only ${fleet.reduce((n, e) => n + e.finished.size, 0)} of ${RUNS} runs finished: ${JSON.stringify(rows)}\nA:\n${a.stderr().slice(-4000)}\nB:\n${b.stderr().slice(-4000)}`,
        );
      }
      await Promise.race(fleet.map((e) => e.finishedCount(e.finished.size + 1, 1_000).catch(() => {})));
    }
    expect(await exitCode).to.equal(0);
    const drainSeconds = (Date.now() - startedDrain) / 1000;

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT id, status, passed, instance_id FROM otp_runs WHERE id = ANY($1)', [
        runIds,
      ]);
      const statuses = rows.map((r) => r.status);
      expect(
        statuses.filter((s) => s !== 'passed'),
        'runs that did not pass',
      ).to.deep.equal([]);
      expect(rows.every((r) => r.passed === STEPS)).to.equal(true);
      const moved = rows.filter((r) => r.instance_id !== rows[0].instance_id).length;
      const steps = await client.query(
        "SELECT count(*)::int AS n FROM otp_run_steps WHERE run_id = ANY($1) AND status = 'pass' AND source = 'executor'",
        [runIds],
      );
      expect(steps.rows[0].n).to.equal(RUNS * STEPS);
      // Every executor resumed its session on B (4503 from A, welcome resumed: true).
      for (const e of fleet) {
        expect(e.closes[0]).to.equal(4503);
        expect(e.resumes).to.deep.equal([false, true]);
      }
      const twice = [...fleet.flatMap((e) => [...e.performed.entries()])].filter(([, n]) => n !== 1);
      expect(twice, 'steps performed more than once').to.deep.equal([]);
      // Runs in flight moved with their sessions (not only queued runs claimed again by B).
      const takenOver = b
        .stderr()
        .split('\n')
        .filter((line) => line.includes('"session taken over from another process"'))
        .reduce((n, line) => n + JSON.parse(line).runs, 0);
      expect(takenOver, 'runs taken over mid-run').to.be.greaterThan(0);
      console.log(
        `      rolling restart: ${RUNS} runs (${inFlightAtSigterm} unfinished at SIGTERM, ${takenOver} moved mid-run), 0 lost; ${moved} finished on B; all done ${drainSeconds.toFixed(1)} s after SIGTERM`,
      );
    } finally {
      await client.end();
      for (const e of fleet) e.close();
    }
  });
});
