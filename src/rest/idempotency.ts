// Idempotency-Key on POST: a retried request with the same key (per API key, method and path) gets the
// first answer again, never a second write. Kept in PostgreSQL so that a retry landing on another
// process is recognised too. Only successful (2xx) answers are kept: a refused request wrote nothing,
// so running its retry again is safe and gives the retry a chance once the cause is gone.
import { createHash } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { AppError, ErrorCode, errors } from '../errors.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Headers of the first answer that a replay repeats. */
const KEPT_HEADERS = ['etag', 'location'];

export interface StoredAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** The answer held a secret: only the id was kept. */
  redacted: boolean;
}

export interface IdempotencyScope {
  keyId: string;
  method: string;
  path: string;
  key: string;
}

export type Claim = { kind: 'first' } | { kind: 'replay'; answer: StoredAnswer };

export function requestHash(body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('hex');
}

export function checkIdempotencyKey(value: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) {
    throw errors.validation('Invalid Idempotency-Key', [
      {
        field: 'header.Idempotency-Key',
        message: 'must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
      },
    ]);
  }
}

export class IdempotencyStore {
  private lastPurge = 0;

  constructor(
    private readonly db: Db,
    private readonly options: { ttlSec: number; staleSec: number },
  ) {}

  /**
   * Claims the key for this request, or answers the stored first answer. A key whose first request
   * is still in flight is a 409; the same key with another body is a 422.
   */
  async claim(scope: IdempotencyScope, hash: string): Promise<Claim> {
    this.purgeNow();
    const { ttlSec, staleSec } = this.options;
    // Insert, or take over a row that expired or whose first request was abandoned (its process died).
    const { rows } = await this.db.raw(
      `INSERT INTO idempotency_keys (key_id, method, path, idempotency_key, request_hash)
            VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, method, path, idempotency_key) DO UPDATE
              SET request_hash = excluded.request_hash, status = NULL, body = NULL, headers = NULL, created_at = now()
            WHERE idempotency_keys.created_at < now() - make_interval(secs => ?)
               OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at < now() - make_interval(secs => ?))
       RETURNING 1`,
      [scope.keyId, scope.method, scope.path, scope.key, hash, ttlSec, staleSec],
    );
    if (rows.length) return { kind: 'first' };
    const row = await this.db('idempotency_keys')
      .where({ key_id: scope.keyId, method: scope.method, path: scope.path, idempotency_key: scope.key })
      .first('request_hash', 'status', 'body', 'headers');
    if (!row) return this.claim(scope, hash); // released between the two statements
    if (row.request_hash !== hash) {
      throw errors.idempotencyKeyReused(
        'This Idempotency-Key was already used with a different request body; use a new key for a new request',
      );
    }
    if (row.status === null) {
      throw new AppError(
        ErrorCode.conflict,
        'The first request with this Idempotency-Key is still in progress; retry shortly',
        {},
        {
          headers: { 'Retry-After': '1' },
        },
      );
    }
    const { redacted, ...kept } = (row.headers ?? {}) as Record<string, string> & { redacted?: boolean };
    return {
      kind: 'replay',
      answer: { status: row.status, body: row.body, headers: kept, redacted: redacted === true },
    };
  }

  async complete(
    scope: IdempotencyScope,
    status: number,
    body: unknown,
    headers: Record<string, unknown>,
    redacted = false,
  ): Promise<void> {
    const kept: Record<string, unknown> = redacted ? { redacted: true } : {};
    for (const name of KEPT_HEADERS) if (typeof headers[name] === 'string') kept[name] = headers[name] as string;
    await this.where(scope).update({
      status,
      body: JSON.stringify(body ?? null),
      headers: JSON.stringify(kept),
    });
  }

  /** The request failed: forget the key so that a retry runs afresh. */
  async release(scope: IdempotencyScope): Promise<void> {
    await this.where(scope).whereNull('status').delete();
  }

  private where(scope: IdempotencyScope) {
    return this.db('idempotency_keys').where({
      key_id: scope.keyId,
      method: scope.method,
      path: scope.path,
      idempotency_key: scope.key,
    });
  }

  /** Expired keys go at most once a minute per process, off the request's path. */
  private purgeNow(): void {
    const now = Date.now();
    if (now - this.lastPurge < 60_000) return;
    this.lastPurge = now;
    void this.db('idempotency_keys')
      .where('created_at', '<', this.db.raw('now() - make_interval(secs => ?)', [this.options.ttlSec]))
      .delete()
      .catch(() => {});
  }
}
