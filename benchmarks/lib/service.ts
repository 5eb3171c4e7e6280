// The service under test: `node --import tsx src/main.ts` in its own process, on free loopback ports,
// on a FRESH database (created on the DATABASE_URL server and dropped afterwards), or with the
// service's own embedded PostgreSQL in a temporary DATA_DIR when the harness runs with --embedded.

import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { connectInspector } from './inspector.js';
import { freePort, keepTail, rssKiB, sleep, spawnTs, stopProcess } from './procs.js';

export const BENCH_KEY = `svc_pk_bench_${randomBytes(24).toString('base64url')}`;

export interface ServiceOptions {
  /** Base server URL for a fresh database; undefined = the service's embedded PostgreSQL. */
  databaseUrl?: string;
  /** The database of another service under test, used as it is (a second process of one deployment). */
  sharedDatabaseUrl?: string;
  /** Extra environment for the service (e.g. OTP_KEEPALIVE_SEC). */
  env?: Record<string, string>;
  /**
   * Write V8 CPU profiles of the service into this directory: the whole process (node --cpu-prof)
   * and, with `inspect`, the measured window alone where a scenario asks for it (profileWindow).
   */
  cpuProfDir?: string;
  /** Open the V8 inspector on a loopback port (for forcing a garbage collection before reading memory). */
  inspect?: boolean;
  /** Append the service's own log lines (stdout) to this file; set LOG_LEVEL in env to get some. */
  logFile?: string;
}

export interface ServiceUnderTest {
  /** REST base, with /api/v1. */
  api: string;
  otpUrl: string;
  key: string;
  pid: number;
  /** A direct connection to the service's database, for checks the harness makes. */
  db: pg.Client;
  /** The service's database, for further connections of the harness. */
  dbUrl: string;
  rssKiB(): number;
  /** Forces a full garbage collection (needs `inspect`); answers the JS heap in use afterwards, in KiB. */
  collectGarbage(): Promise<number>;
  /** Evaluates an expression in the service (needs `inspect`; `require` is available); answers its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Writes a heap snapshot of the service into `file`, after a full GC (needs `inspect`). */
  writeHeapSnapshot(file: string): Promise<void>;
  /**
   * Starts a CPU profile through the inspector (needs `inspect` and `cpuProfDir`, otherwise a no-op);
   * the function it answers stops it and writes `<name>.window.cpuprofile` into cpuProfDir.
   */
  profileWindow(name: string): Promise<() => Promise<void>>;
  /** Process ids of the PostgreSQL backends serving the service's database (when PostgreSQL runs here). */
  backendPids(): Promise<number[]>;
  /** Calls the REST API with the bench key; throws on a non-2xx answer. */
  request<T = any>(method: string, urlPath: string, body?: unknown): Promise<T>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 20 s: a drain that hands sessions over may need more). */
  stop(graceMs?: number): Promise<void>;
}

async function createDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `otp_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startService(options: ServiceOptions): Promise<ServiceUnderTest> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-bench-data-'));
  // Embedded PostgreSQL refuses to run as root from a directory its own user cannot reach.
  await fs.chmod(dataDir, 0o755);
  const shared = options.sharedDatabaseUrl;
  const database = options.databaseUrl && !shared ? await createDatabase(options.databaseUrl) : undefined;
  const [port, wsPort, pgPort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    WS_PORT: String(wsPort),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SVC_BOOTSTRAP_KEY: BENCH_KEY,
    LOG_LEVEL: 'silent',
    // The rate limit keeps counting (its cost is part of every REST figure) but never refuses here.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    ...options.env,
  };
  if (database) env.DATABASE_URL = database.url;
  else if (shared) env.DATABASE_URL = shared;
  else {
    delete env.DATABASE_URL;
    env.EMBEDDED_PG_PORT = String(pgPort);
  }
  const nodeFlags = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  if (options.inspect) nodeFlags.push('--inspect=127.0.0.1:0');
  const child = spawnTs('src/main.ts', { env, nodeFlags });
  const tail = keepTail(child);
  let inspectorUrl: string | undefined;
  child.stderr?.on('data', (chunk: Buffer) => {
    inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(chunk.toString())?.[1];
  });
  if (options.logFile) {
    const log = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  } else child.stdout?.resume();
  let exited = false;
  child.once('exit', () => (exited = true));

  const api = `http://127.0.0.1:${port}/api/v1`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the service exited while starting:\n${tail()}`);
    if (Date.now() > deadline) {
      await stopProcess(child);
      throw new Error(`the service did not start within 60 s:\n${tail()}`);
    }
    const up = await fetch(`${api}/otp/protocol`).then(
      (r) => r.ok,
      () => false,
    );
    if (up && (await canConnect(wsPort))) break;
    await sleep(50);
  }

  let dbUrl = database?.url ?? shared;
  if (!dbUrl) {
    const { password } = JSON.parse(await fs.readFile(path.join(dataDir, 'embedded-pg.json'), 'utf8')) as {
      password: string;
    };
    dbUrl = `postgres://otp:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/otp`;
  }
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();

  const request = async (method: string, urlPath: string, body?: unknown) => {
    const res = await fetch(`${api}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${BENCH_KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${urlPath} answered ${res.status}: ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  };

  return {
    api,
    otpUrl: `ws://127.0.0.1:${wsPort}/otp`,
    key: BENCH_KEY,
    pid: child.pid!,
    db,
    dbUrl,
    rssKiB: () => rssKiB(child.pid!),
    evaluate: async <T>(expression: string) => {
      if (!inspectorUrl) throw new Error('the service was not started with inspect: true');
      const inspector = await connectInspector(inspectorUrl);
      try {
        const { result, exceptionDetails } = await inspector.call('Runtime.evaluate', {
          expression,
          includeCommandLineAPI: true,
          returnByValue: true,
        });
        if (exceptionDetails) throw new Error(`evaluate failed: ${JSON.stringify(exceptionDetails).slice(0, 500)}`);
        return result.value as T;
      } finally {
        inspector.close();
      }
    },
    collectGarbage: async () => {
      if (!inspectorUrl) throw new Error('the service was not started with inspect: true');
      const inspector = await connectInspector(inspectorUrl);
      try {
        await inspector.call('HeapProfiler.collectGarbage');
        const { usedSize } = await inspector.call<{ usedSize: number }>('Runtime.getHeapUsage');
        return usedSize / 1024;
      } finally {
        inspector.close();
      }
    },
    writeHeapSnapshot: async (file) => {
      if (!inspectorUrl) throw new Error('the service was not started with inspect: true');
      const inspector = await connectInspector(inspectorUrl);
      const out = createWriteStream(file);
      try {
        inspector.on('HeapProfiler.addHeapSnapshotChunk', ({ chunk }: { chunk: string }) => out.write(chunk));
        await inspector.call('HeapProfiler.collectGarbage');
        await inspector.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        inspector.close();
        await new Promise((resolve) => out.end(resolve));
      }
    },
    profileWindow: async (name) => {
      if (!inspectorUrl || !options.cpuProfDir) return async () => {};
      const inspector = await connectInspector(inspectorUrl);
      await inspector.call('Profiler.enable');
      await inspector.call('Profiler.setSamplingInterval', { interval: 1000 });
      await inspector.call('Profiler.start');
      return async () => {
        try {
          const { profile } = await inspector.call<{ profile: unknown }>('Profiler.stop');
          await fs.writeFile(
            path.join(options.cpuProfDir!, `${name}.${Date.now()}.window.cpuprofile`),
            JSON.stringify(profile),
          );
        } finally {
          inspector.close();
        }
      };
    },
    backendPids: async () =>
      (
        await db.query(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows.map((r: { pid: number }) => r.pid),
    request,
    stop: async (graceMs = 20_000) => {
      await db.end().catch(() => {});
      const code = await stopProcess(child, graceMs);
      if (code !== 0 && code !== 143 && code !== null)
        process.stderr.write(`service exited with ${code}:\n${tail()}\n`);
      await database?.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a test case through the REST API (`body` is the whole case, its title included); answers its id. */
export async function createTestCase(service: ServiceUnderTest, body: unknown): Promise<string> {
  const created = await service.request<{ id: string }>('POST', '/tests/cases', body);
  return created.id;
}
