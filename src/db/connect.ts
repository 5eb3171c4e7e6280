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
    acquireConnectionTimeout: 10_000,
  });
}

export async function migrate(db: Db): Promise<void> {
  await db.migrate.latest({ migrationSource });
}
