// A fresh PostgreSQL database per test suite: on the server named by DATABASE_URL when it is set
// (CI), otherwise on one embedded server started for this test process (each mocha --parallel worker
// is a process of its own, with its own server).
//
// The embedded server is started once per process, before the first file's suites (database-hooks.ts).
// When it cannot start, that start fails as soon as PostgreSQL gives up (seconds), with its reason, and
// every createTestDatabase() fails at once with the same error: no suite waits in its "before all"
// hook for a server that is not coming.

import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type EmbeddedOptions, startEmbeddedPostgres } from '../../src/db/embedded.js';

let serverUrl: Promise<string> | undefined;
let embeddedOptions: Pick<EmbeddedOptions, 'nativeDir' | 'stateDir'> = {};

/** Options of this process's embedded server, before it starts (tests of the start's failures). */
export function configureEmbeddedServer(options: Pick<EmbeddedOptions, 'nativeDir' | 'stateDir'>): void {
  embeddedOptions = options;
}

function baseUrl(): Promise<string> {
  const external = loadConfig().databaseUrl;
  if (external) return Promise.resolve(external);
  serverUrl ??= (async () => {
    const dir = path.join(os.tmpdir(), `otp-test-pg-${process.pid}`);
    await fs.rm(dir, { recursive: true, force: true });
    try {
      const server = await startEmbeddedPostgres(dir, { database: 'postgres', ...embeddedOptions });
      process.once('exit', () => void server.stop());
      return server.url;
    } catch (err) {
      throw new Error(`no database for the tests: ${(err as Error).message} (the tests need CREATEDB on it)`, {
        cause: err,
      });
    }
  })();
  return serverUrl;
}

/** Resolves once this process's database server is up (at once with DATABASE_URL); rejects when it cannot start. */
export async function databaseReady(): Promise<void> {
  await baseUrl();
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
