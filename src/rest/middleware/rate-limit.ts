// The per-key REST rate limit: a window of 60 s per API key, opened by its first request, counted in
// PostgreSQL so that every service process behind a load balancer shares one count (see RateCounter);
// the row of a key is reused, so the table holds one row per key that ever called.
import type Koa from 'koa';
import type { Db } from '../../db/connect.js';
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';

export const WINDOW_SEC = 60;
const POLICY = 'per-key';

export interface RateLimitDeps {
  counter: RateCounter;
  /** Requests per window allowed to this principal (its tier's, or the configured override). */
  limitFor(principal: Principal): number;
}

// One statement counts the requests of every key waiting in a batch: each key's row gains the number
// of its requests (or restarts its window with them).
const COUNT_SQL = `
INSERT INTO rate_limit_windows AS w (key_id, window_start, count)
SELECT v.key_id, now(), v.n FROM jsonb_to_recordset(?::jsonb) AS v(key_id text, n int)
ON CONFLICT (key_id) DO UPDATE
   SET count = CASE WHEN w.window_start <= now() - make_interval(secs => ?) THEN EXCLUDED.count ELSE w.count + EXCLUDED.count END,
       window_start = CASE WHEN w.window_start <= now() - make_interval(secs => ?) THEN now() ELSE w.window_start END
RETURNING key_id, count, ceil(extract(epoch FROM (window_start + make_interval(secs => ?) - now())))::int AS reset_sec`;

interface Waiter {
  resolve(result: { count: number; resetSec: number }): void;
  reject(err: unknown): void;
}

/**
 * Counts requests per key in PostgreSQL, shared by every process. Requests that arrive while a count
 * is being written wait and are counted together in the next statement (one upsert per batch, not
 * per request), each answered its own place in the count. The write does not wait for the disk
 * (its pool sets synchronous_commit off): a crash may forget the last few counts, which a rate limit
 * can afford, and a read no longer pays for a flush of the log.
 */
export class RateCounter {
  private waiting = new Map<string, Waiter[]>();
  private writing = false;

  /** `db` should be a pool with asyncCommit (see createDb): the count does not wait for the disk. */
  constructor(private readonly db: Db) {}

  count(keyId: string): Promise<{ count: number; resetSec: number }> {
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(keyId);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(keyId, [{ resolve, reject }]);
      if (!this.writing) void this.write();
    });
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.size) {
        const batch = this.waiting;
        this.waiting = new Map();
        try {
          const keys = [...batch].map(([keyId, list]) => ({ key_id: keyId, n: list.length }));
          const result = await this.db.raw(COUNT_SQL, [JSON.stringify(keys), WINDOW_SEC, WINDOW_SEC, WINDOW_SEC]);
          const rows = result.rows as Array<{ key_id: string; count: number; reset_sec: number }>;
          for (const row of rows) {
            const list = batch.get(row.key_id)!;
            const first = row.count - list.length + 1;
            list.forEach((w, i) => w.resolve({ count: first + i, resetSec: Math.max(1, row.reset_sec) }));
          }
        } catch (err) {
          for (const list of batch.values()) for (const w of list) w.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

/** Requests a key has made in its current window (0 when the window has passed). */
export async function currentCount(db: Db, keyId: string): Promise<number> {
  const row = await db('rate_limit_windows')
    .where('key_id', keyId)
    .where('window_start', '>', db.raw('now() - make_interval(secs => ?)', [WINDOW_SEC]))
    .first('count');
  return row?.count ?? 0;
}

/**
 * After authentication: every request made with a key counts, whatever its route. Answers carry
 * `RateLimit-Policy` and `RateLimit` (IETF httpapi-ratelimit-headers); a request over the limit gets
 * 429 RATE_LIMITED with `Retry-After`. Requests without a valid key are not counted here.
 */
export function rateLimitMiddleware(deps: RateLimitDeps): Koa.Middleware {
  return async (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (!principal) return next();
    const limit = deps.limitFor(principal);
    const { count, resetSec } = await deps.counter.count(principal.keyId);
    const remaining = Math.max(0, limit - count);
    const headers = {
      'RateLimit-Policy': `"${POLICY}";q=${limit};w=${WINDOW_SEC}`,
      RateLimit: `"${POLICY}";r=${remaining};t=${resetSec}`,
    };
    ctx.set(headers);
    if (count > limit) {
      throw errors.rateLimited(
        `Rate limit of ${limit} requests per ${WINDOW_SEC} s for this API key reached; retry in ${resetSec} s`,
        { limit, windowSec: WINDOW_SEC, retryAfterSec: resetSec },
        { ...headers, 'Retry-After': String(resetSec) },
      );
    }
    await next();
  };
}
