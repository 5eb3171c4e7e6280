// Stopping the service as people and supervisors do: Ctrl-C in a terminal (SIGINT to the whole
// process group of `npm start`), `kill -TERM` of the `npm start` process, and the production start
// (`npm run build`, `npm run start:prod`). Each time every process of the group and the embedded
// PostgreSQL must be gone (read from /proc), and the run in flight must have ended.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { TestExecutor } from '../support/executor.js';
import { spawnService } from '../support/process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'svc_pk_signals_test_key_0123456789abcdefghijklm';

interface Proc {
  pid: number;
  pgid: number;
  cmdline: string;
}

/** Every process on the machine: pid, process group and command line, from /proc. */
async function processes(): Promise<Proc[]> {
  const found: Proc[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state ppid pgrp ...
      const [, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = (await fs.readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ').trim();
      found.push({ pid: Number(entry), pgid: Number(pgrp), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  restUrl: string;
  wsUrl: string;
  stderr(): string;
}

/** `npm <args>` in a process group of its own (as a terminal runs it), until the service is ready. */
async function npm(args: string[], env: Record<string, string | undefined>): Promise<Started> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    PORT: '0',
    WS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...env,
  })) {
    if (v !== undefined) childEnv[k] = v;
  }
  const child = spawn('npm', args, { cwd: root, env: childEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stdout!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = await new Promise<{ rest: string; otp: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s:\n${err}`)), 60_000);
    child.stderr!.on('data', (d) => {
      err += d;
      const line = err.split('\n').find((l) => l.includes('"service ready"'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
    void exited.then(({ code }) => reject(new Error(`exited with ${code} before it was ready:\n${err}`)));
  });
  return { child, exited, restUrl: ready.rest.replace(/\/api\/v1$/, ''), wsUrl: ready.otp, stderr: () => err };
}

/** A run with a step in flight on an executor that never answers it. */
async function runInFlight(s: Started): Promise<{ runId: string; executor: TestExecutor }> {
  const post = async (p: string, body: unknown) =>
    (
      await fetch(`${s.restUrl}/api/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const testCase = await post('/tests/cases', { title: 'long', steps: [{ otp: { action: 'wait', ms: 60000 } }] });
  const executor = await TestExecutor.connect(s.wsUrl, { key: KEY });
  await executor.hello();
  const run = await post('/otp/runs', { testCaseIds: [testCase.id] });
  await executor.next('step.exec', () => true, 10_000);
  return { runId: run.runId, executor };
}

/** The embedded PostgreSQL of `dataDir` (its command line names its data directory). */
const postgresOf = async (dataDir: string) =>
  (await processes()).filter((p) => p.cmdline.includes('postgres') && p.cmdline.includes(dataDir));

async function expectNothingLeft(group: number, dataDir: string): Promise<void> {
  const left = (await processes()).filter((p) => p.pgid === group || p.cmdline.includes(dataDir));
  expect(left, 'processes left running').to.deep.equal([]);
}

/** Starts the service again on the same data: the run must have ended before PostgreSQL stopped. */
async function runAfterRestart(dataDir: string, runId: string) {
  const again = await spawnService({ DATA_DIR: dataDir, DATABASE_URL: undefined, SVC_BOOTSTRAP_KEY: KEY });
  try {
    const res = await fetch(`${again.restUrl}/api/v1/otp/runs/${runId}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    return (await res.json()) as { status: string; reason: string };
  } finally {
    expect(await again.stop('SIGTERM')).to.equal(0);
  }
}

describe('stopping the service from a terminal and from a supervisor', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  const newDataDir = async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-signals-'));
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  const zeroConfig = (dataDir: string) => ({
    DATA_DIR: dataDir,
    DATABASE_URL: undefined,
    SVC_BOOTSTRAP_KEY: KEY,
    OTP_DRAIN_MS: '500',
  });

  it('Ctrl-C (SIGINT to the process group of npm start): the run in flight ends, then everything stops, PostgreSQL last', async () => {
    const dataDir = await newDataDir();
    const s = await npm(['start'], zeroConfig(dataDir));
    const group = s.child.pid!;
    const [postgres] = await postgresOf(dataDir);
    expect(postgres, 'the embedded PostgreSQL runs').to.not.equal(undefined);
    // In a process group of its own: the terminal's SIGINT does not reach it.
    expect(postgres!.pgid).to.not.equal(group);
    const { runId, executor } = await runInFlight(s);

    process.kill(-group, 'SIGINT');
    await s.exited;
    expect((await executor.closed).code).to.equal(1001);
    expect(s.stderr()).to.contain('"msg":"stopped"');
    await expectNothingLeft(group, dataDir);
    expect(await runAfterRestart(dataDir, runId)).to.deep.include({ status: 'error', reason: 'service shutting down' });
  });

  it('SIGTERM to the npm start process alone: nothing is left running', async () => {
    const dataDir = await newDataDir();
    const s = await npm(['start'], zeroConfig(dataDir));
    const group = s.child.pid!;
    expect(await postgresOf(dataDir)).to.have.length.greaterThan(0);
    const { runId } = await runInFlight(s);

    process.kill(s.child.pid!, 'SIGTERM');
    await s.exited;
    // npm exits once its child has: the service's own exit comes with it.
    expect(s.stderr()).to.contain('"msg":"stopped"');
    await expectNothingLeft(group, dataDir);
    expect((await runAfterRestart(dataDir, runId)).status).to.equal('error');
  });

  it('the production start (npm run build, npm run start:prod) serves with no TypeScript loader, and stops on SIGTERM', async () => {
    await new Promise<void>((resolve, reject) =>
      execFile('npm', ['run', 'build'], { cwd: root }, (err, _out, stderr) =>
        err ? reject(new Error(`build failed: ${stderr}`)) : resolve(),
      ),
    );
    const dataDir = await newDataDir();
    const s = await npm(['run', 'start:prod'], zeroConfig(dataDir));
    const group = s.child.pid!;
    const service = (await processes()).filter((p) => p.pgid === group && p.cmdline.includes('dist/src/main.js'));
    expect(service, 'node runs the compiled service').to.have.length(1);
    expect(service[0]!.cmdline).to.not.match(/tsx|ts-node|--import|--loader/);
    const protocol = await fetch(`${s.restUrl}/api/v1/otp/protocol`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(protocol.status).to.equal(200);
    // The compiled migrations ran: a run can be created and driven.
    const { executor } = await runInFlight(s);
    expect(executor.sessionId).to.match(/^ots_/);

    process.kill(s.child.pid!, 'SIGTERM');
    await s.exited;
    await expectNothingLeft(group, dataDir);
  });
});
