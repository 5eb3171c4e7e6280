// The per-key REST rate limit: a window of 60 s per API key, opened by its first request, counted in
// PostgreSQL so that every service process behind a load balancer shares one count. One upsert per
// request; the row of a key is reused, so the table holds one row per key that ever called.
import type Koa from 'koa';
import type { Db } from '../../db/connect.js';
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';

export const WINDOW_SEC = 60;
const POLICY = 'per-key';

export interface RateLimitDeps {
  db: Db;
  /** Requests per window allowed to this principal (its tier's, or the configured override). */
  limitFor(principal: Principal): number;
}

/** Counts one request of a key; answers the count in the window and the seconds until it resets. */
export async function countRequest(db: Db, keyId: string): Promise<{ count: number; resetSec: number }> {
  const { rows } = await db.raw(
    `INSERT INTO rate_limit_windows AS w (key_id, window_start, count) VALUES (?, now(), 1)
     ON CONFLICT (key_id) DO UPDATE
        SET count = CASE WHEN w.window_start <= now() - make_interval(secs => ?) THEN 1 ELSE w.count + 1 END,
            window_start = CASE WHEN w.window_start <= now() - make_interval(secs => ?) THEN now() ELSE w.window_start END
     RETURNING count, ceil(extract(epoch FROM (window_start + make_interval(secs => ?) - now())))::int AS reset_sec`,
    [keyId, WINDOW_SEC, WINDOW_SEC, WINDOW_SEC],
  );
  return { count: rows[0].count, resetSec: Math.max(1, rows[0].reset_sec) };
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
    const { count, resetSec } = await countRequest(deps.db, principal.keyId);
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
