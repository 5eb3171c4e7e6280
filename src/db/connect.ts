import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../db/migrations/index.js';
import { type Logger, safeText, throttledLog } from '../log.js';

// COUNT(*) and BIGINT come back from pg as strings; the counts this service keeps fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Db = Knex;

/**
 * How long a query waits for a pooled connection. While the database is down this is not what the
 * caller waits: a failed connect rejects the waiting queries at once (knex's propagateCreateError),
 * so this only bounds a wait for a free connection under load, where seconds can be normal: kept at
 * knex's 10 s rather than turning a busy minute into 503s.
 */
export const ACQUIRE_TIMEOUT_MS = 10_000;
/**
 * How long opening one connection may take (TCP, TLS, authentication). A database that refuses
 * answers at once; one that does not answer at all (a partition, a host gone) would otherwise hold a
 * connect, and every query waiting on it, for the kernel's TCP time-out (minutes).
 */
export const CONNECT_TIMEOUT_MS = 2_000;

export interface PoolOptions {
  min?: number;
  max?: number;
  /** Commits on these connections do not wait for the disk: for data a crash may lose (counters). */
  asyncCommit?: boolean;
  /** How long a query waits for a pooled connection before knex gives up (ms). */
  acquireTimeoutMs?: number;
}

/**
 * knex's own messages (an "Acquire connection error" with a stack on every failed connect, "Connection
 * Error" when a pooled connection breaks, deprecations) as JSON lines of the one logger: the first
 * line only, connection strings masked, and each distinct message at most once a minute (an outage
 * would otherwise print one per attempt). The outage itself is logged where it is detected.
 */
export function knexLog(log: Logger): Knex.Config['log'] {
  const warn = throttledLog(log, 60_000, 'info');
  const error = throttledLog(log, 60_000, 'error');
  const text = (message: unknown) =>
    safeText(typeof message === 'string' ? message : message instanceof Error ? message.message : String(message));
  return {
    // A failed connect fails the query that asked, and DatabaseHealth (db/health.ts) speaks of an
    // outage once: knex's own line for each attempt is only for debugging.
    warn: (message: unknown) =>
      /^(Acquire connection error|Connection Error)/.test(text(message))
        ? log.debug('database driver warning', { source: 'knex', detail: text(message) })
        : warn(text(message), 'database driver warning', { source: 'knex', detail: text(message) }),
    error: (message: unknown) =>
      error(text(message), 'database driver error', { source: 'knex', detail: text(message) }),
    deprecate: (method: unknown, alternative: unknown) =>
      warn(`deprecate ${String(method)}`, 'database driver deprecation', {
        source: 'knex',
        method: String(method),
        alternative: String(alternative),
      }),
    debug: (message: unknown) => log.debug('database driver debug', { source: 'knex', detail: text(message) }),
  };
}

/** Libraries must not print on their own: without a logger, knex's messages are dropped, not printed. */
const SILENT: Logger = { info: () => {}, debug: () => {}, error: () => {} };

export function createDb(url: string, pool: PoolOptions = {}, log: Logger = SILENT): Db {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true },
    pool: {
      min: pool.min ?? 0,
      max: pool.max ?? 20,
      ...(pool.asyncCommit
        ? {
            afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
              void conn.query('SET synchronous_commit = off', (err: Error | null) => done(err, conn));
            },
          }
        : {}),
    },
    acquireConnectionTimeout: pool.acquireTimeoutMs ?? ACQUIRE_TIMEOUT_MS,
    // A failed statement's message carries the statement, not its values (rows, keys, text of users).
    compileSqlOnError: false,
    log: knexLog(log),
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
