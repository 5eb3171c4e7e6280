// A fresh PostgreSQL database per test suite: on the server named by DATABASE_URL when it is set
// (CI), otherwise on one embedded server started for this test process.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { loadConfig } from '../../src/config.js';

let serverUrl: Promise<string> | undefined;

function baseUrl(): Promise<string> {
  const external = loadConfig().databaseUrl;
  if (external) return Promise.resolve(external);
  serverUrl ??= (async () => {
    const dir = path.join(os.tmpdir(), `otp-test-pg-${process.pid}`);
    await fs.rm(dir, { recursive: true, force: true });
    const server = await startEmbeddedPostgres(dir, { database: 'postgres' });
    process.once('exit', () => void server.stop());
    return server.url;
  })();
  return serverUrl;
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = await baseUrl();
  const name = `otp_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
