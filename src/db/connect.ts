import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../db/migrations/index.js';

// COUNT(*) and BIGINT come back from pg as strings; the counts this service keeps fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Db = Knex;

export interface PoolOptions {
  min?: number;
  max?: number;
  /** Commits on these connections do not wait for the disk: for data a crash may lose (counters). */
  asyncCommit?: boolean;
  /** How long a query waits for a pooled connection before knex gives up (ms). */
  acquireTimeoutMs?: number;
}

export function createDb(url: string, pool: PoolOptions = {}): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: {
      min: pool.min ?? 0,
      max: pool.max ?? 20,
      ...(pool.asyncCommit
        ? {
            afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
              conn.query('SET synchronous_commit = off', (err: Error | null) => done(err, conn));
            },
          }
        : {}),
    },
    acquireConnectionTimeout: pool.acquireTimeoutMs ?? 10_000,
  });
}

// Any fixed number, the same in every process of this service: the key of the migrations' lock.
const MIGRATION_LOCK = 0x6f74_706d; // "otpm"

/**
 * Brings the schema up to date. Processes started together on a new database would each create
 * knex's own bookkeeping tables at once and all but one fail, so the whole walk is serialised on a
 * PostgreSQL advisory lock, held by a transaction on one connection while the migrations run on
 * others (the pool needs two): a process that waited finds nothing left to do.
 */
export async function migrate(db: Db): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    await db.migrate.latest({ migrationSource });
  });
}
