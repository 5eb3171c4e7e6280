import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../db/migrations/index.js';

// COUNT(*) and BIGINT come back from pg as strings; the counts this service keeps fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Db = Knex;

export function createDb(url: string, pool: { min?: number; max?: number } = {}): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: pool.min ?? 0, max: pool.max ?? 20 },
    acquireConnectionTimeout: 10_000,
  });
}

export async function migrate(db: Db): Promise<void> {
  await db.migrate.latest({ migrationSource });
}
