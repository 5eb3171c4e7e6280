// Which failures mean a part of the service is down: the database (this part) or the object store
// (below). Kept in the kernel so the one normaliser (errors.ts) can use them; src/db/unavailable.ts and
// src/assets/storage/unavailable.ts are where the rooms import them from.
//
// Which failures mean "PostgreSQL cannot be reached or is going away" (retry later, answer 503), as
// opposed to failures of the statement itself (a constraint, a syntax error: retrying changes nothing).
// The driver and the query builder report an outage in several shapes: a Node socket error (on
// connect, or an AggregateError of one per address tried), pg's "Connection terminated ..." when the
// server goes away mid-statement (knex prefixes the statement's SQL to that message), knex's time-out
// acquiring a pooled connection, or an SQLSTATE from the server as it shuts down. Any of them may come
// wrapped as another error's `cause`.

/** Node's socket and name-resolution codes: the server is not there (or not reachable from here). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

/**
 * SQLSTATEs of a server that is going away or not accepting connections: class 08 (connection
 * exception) is matched as a class; 57P01 admin_shutdown (also what pg_terminate_backend sends),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery), and
 * 53300 too_many_connections (the server is there but takes no one more: a fail-over's stampede).
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** pg's messages when the connection ends under a statement or a connect times out (knex may prefix "<sql> - "). */
const DRIVER_MESSAGES =
  /(?:^| - )(?:Connection terminated(?: unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|timeout expired|timeout exceeded when trying to connect)$/;

/** knex's error when no pooled connection could be had in acquireConnectionTimeout (not its query time-out). */
const KNEX_ACQUIRE_TIMEOUT = /^Knex: Timeout acquiring a connection/;

function isUnavailableHere(err: object): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code) || SQLSTATES.has(code)) return true;
  }
  if (typeof message === 'string') {
    if (KNEX_ACQUIRE_TIMEOUT.test(message)) return true;
    if (DRIVER_MESSAGES.test(message)) return true;
  }
  return false;
}

/**
 * True when `err`, or an error in its `cause` chain (or one of an AggregateError's `errors`), says the
 * database cannot be reached or is going away; false for errors of the statement, and for the object
 * store's errors (see isStorageUnavailable).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  // A socket error of the object store's (the SDK marks its errors, the drivers tag theirs) is not the database's.
  return someInChain(err, isUnavailableHere) && !isStorageUnavailable(err);
}

/** Walks `err`, its causes and an AggregateError's members (cycles and depth bounded), asking `test` of each. */
export function someInChain(err: unknown, test: (err: object) => boolean): boolean {
  const seen = new Set<object>();
  const pending: unknown[] = [err];
  while (pending.length && seen.size < 32) {
    const current = pending.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    if (test(current)) return true;
    const { cause, errors } = current as { cause?: unknown; errors?: unknown };
    pending.push(cause);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}

// Which storage failures mean "the object store cannot be reached or is failing" (retry later, answer
// 503 storage_unavailable), as opposed to answers about the request (NoSuchKey, AccessDenied: 4xx).
//
// A socket error alone (ECONNREFUSED) does not say whether it came from S3 or from PostgreSQL, so the
// drivers tag what they throw: every driver call goes through `guardStorage`, which wraps a failure of
// the store in a StorageUnavailableError (the original as its `cause`, for the log). Errors the AWS SDK
// made itself (they carry `$metadata`) are recognised untagged too.
//
// The fs driver: EIO (the disk or network file system failing), ENOSPC and EDQUOT (full), EROFS
// (remounted read-only after an error) are the store's trouble, not the request's, and pass with time
// or an operator: storage_unavailable. ENOENT, EEXIST and the like stay what they are.

export class StorageUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the object store is unavailable', { cause });
    this.name = 'StorageUnavailableError';
  }
}

const FILE_SYSTEM_CODES = new Set(['EIO', 'ENOSPC', 'EDQUOT', 'EROFS']);
/** The SDK's names for a request that got no (timely) answer. */
const SDK_TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);

interface SdkShaped {
  $metadata?: { httpStatusCode?: number };
  $fault?: string;
  name?: string;
  code?: string;
}

function sdkUnavailable(err: SdkShaped): boolean {
  if (!err.$metadata || typeof err.$metadata !== 'object') return false;
  const status = err.$metadata.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return true;
  if (err.$fault === 'server') return true;
  if (typeof err.name === 'string' && SDK_TIMEOUT_NAMES.has(err.name)) return true;
  return typeof err.code === 'string' && SOCKET_CODES.has(err.code);
}

/** True when `err` (or its cause chain) says the object store is down or failing; false for 4xx answers. */
export function isStorageUnavailable(err: unknown): boolean {
  return someInChain(err, (e) => e instanceof StorageUnavailableError || sdkUnavailable(e as SdkShaped));
}

/** A failure straight from a driver's own I/O: here a socket error can only be the store's. */
export function isStoreFailure(err: unknown): boolean {
  return someInChain(err, (e) => {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (e instanceof StorageUnavailableError || sdkUnavailable(e as SdkShaped)) return true;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || FILE_SYSTEM_CODES.has(code))) return true;
    return typeof name === 'string' && SDK_TIMEOUT_NAMES.has(name);
  });
}

/** Runs one storage call; a failure of the store leaves as a StorageUnavailableError, anything else as it was. */
export async function guardStorage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw isStoreFailure(err) && !(err instanceof StorageUnavailableError) ? new StorageUnavailableError(err) : err;
  }
}
