// The per-key REST rate limit: a window of 60 s per API key, opened by its first request, shared by
// every service process through PostgreSQL and counted in memory between syncs (see RateCounter);
// the row of a key is reused, so the table holds one row per key that ever called.
import type Koa from 'koa';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
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
  resolve(result: Count): void;
  reject(err: unknown): void;
}

export interface Count {
  /** This request's place in its key's window, all processes together. */
  count: number;
  resetSec: number;
}

/** What this process knows of a key's window. */
interface KeyWindow {
  /** The shared count as PostgreSQL last answered it. */
  base: number;
  /** Requests answered here since, not yet sent. */
  unsent: number;
  /** When the window closes (ms since the epoch, this process's clock). */
  resetAt: number;
}

/**
 * Counts requests per key, shared by every process through PostgreSQL. A key's first request in a
 * process (or its first after the window passed) is counted in PostgreSQL and answered with the
 * shared count; after that the process counts the key's requests in memory and sends what it
 * counted every `syncMs`, learning the other processes' counts in the same statement. One process
 * alone is exact; with several, each sees the others' requests at most `syncMs` late, so a key
 * can overshoot its limit by what the other processes let through in that time.
 *
 * Requests that need PostgreSQL wait and go together in one upsert (one statement per batch, not
 * per request). The writes do not wait for the disk (the pool sets synchronous_commit off): a
 * crash may forget the last counts, which a rate limit can afford.
 */
export class RateCounter {
  private windows = new Map<string, KeyWindow>();
  private waiting = new Map<string, Waiter[]>();
  // The waiting requests being counted now: their places are not known yet, so later requests of
  // the same keys wait too.
  private counting: ReadonlyMap<string, Waiter[]> = new Map();
  private writing = false;
  private syncDue = false;
  private syncWaiters: Array<() => void> = [];
  private readonly timer: NodeJS.Timeout;

  /** `db` should be a pool with asyncCommit (see createDb): the count does not wait for the disk. */
  constructor(
    private readonly db: Db,
    syncMs = 1_000,
  ) {
    this.timer = setInterval(() => this.sync(), syncMs);
    this.timer.unref();
  }

  /** At once from memory when this process knows the key's window; otherwise once PostgreSQL has counted it. */
  count(keyId: string): Count | Promise<Count> {
    const now = Date.now();
    const window = this.windows.get(keyId);
    if (window && now < window.resetAt && !this.waiting.has(keyId) && !this.counting.has(keyId)) {
      window.unsent++;
      return { count: window.base + window.unsent, resetSec: Math.max(1, Math.ceil((window.resetAt - now) / 1000)) };
    }
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(keyId);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(keyId, [{ resolve, reject }]);
      if (!this.writing) void this.write();
    });
  }

  /**
   * Sends what was counted in memory and learns the other processes' counts (also called by the
   * timer); resolves once a sync that started after this call has been answered (or has failed).
   */
  sync(): Promise<void> {
    return new Promise((resolve) => {
      this.syncWaiters.push(resolve);
      this.syncDue = true;
      if (!this.writing) void this.write();
    });
  }

  /** A last sync; the timer stops. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sync();
  }

  private async write(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.size || this.syncDue) await this.writeBatch();
    } finally {
      this.writing = false;
    }
  }

  /** One statement: the requests waiting now are counted, and when a sync is due the unsent counts are sent. */
  private async writeBatch(): Promise<void> {
    const batch = this.waiting;
    this.waiting = new Map();
    this.counting = batch;
    const unsent = this.syncDue ? this.takeUnsent() : new Map<string, number>();
    // The syncs asked for so far are answered by this statement.
    const synced = this.syncDue ? this.syncWaiters.splice(0) : [];
    this.syncDue = false;
    const keys = [...new Set([...batch.keys(), ...unsent.keys()])].map((keyId) => ({
      key_id: keyId,
      n: (batch.get(keyId)?.length ?? 0) + (unsent.get(keyId) ?? 0),
    }));
    if (!keys.length) {
      for (const done of synced) done();
      return;
    }
    try {
      const result = await this.db.raw(COUNT_SQL, [JSON.stringify(keys), WINDOW_SEC, WINDOW_SEC, WINDOW_SEC]);
      const rows = result.rows as Array<{ key_id: string; count: number; reset_sec: number }>;
      for (const row of rows) this.learn(row, batch.get(row.key_id) ?? [], unsent.get(row.key_id) ?? 0);
    } catch (err) {
      // The unsent counts stay unsent, for the next sync.
      for (const list of batch.values()) for (const w of list) w.reject(err);
    } finally {
      this.counting = new Map();
      for (const done of synced) done();
    }
  }

  /**
   * The unsent count of every open window, 0 included (a window without news of its own still
   * learns the other processes' counts). The counts stay in the windows until PostgreSQL has
   * answered for them, so a request meanwhile still counts them. Closed windows are forgotten.
   */
  private takeUnsent(): Map<string, number> {
    const now = Date.now();
    const taken = new Map<string, number>();
    for (const [keyId, window] of this.windows) {
      // A closed window's unsent requests belong to a window that has passed.
      if (now >= window.resetAt) this.windows.delete(keyId);
      else taken.set(keyId, window.unsent);
    }
    return taken;
  }

  private learn(row: { key_id: string; count: number; reset_sec: number }, waiters: Waiter[], sent: number): void {
    const resetSec = Math.max(1, row.reset_sec);
    const window = this.windows.get(row.key_id);
    const resetAt = Date.now() + resetSec * 1000;
    if (window) Object.assign(window, { base: row.count, unsent: window.unsent - sent, resetAt });
    else this.windows.set(row.key_id, { base: row.count, unsent: 0, resetAt });
    // The waiting requests take the last places of the count; the `sent` ones were answered already.
    const first = row.count - waiters.length + 1;
    for (const [i, w] of waiters.entries()) w.resolve({ count: first + i, resetSec });
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
  const admit = (ctx: Koa.Context, next: Koa.Next, limit: number, { count, resetSec }: Count) => {
    ctx.state.rateLimitCount = count;
    const headers = {
      'RateLimit-Policy': `"${POLICY}";q=${limit};w=${WINDOW_SEC}`,
      RateLimit: `"${POLICY}";r=${Math.max(0, limit - count)};t=${resetSec}`,
    };
    ctx.set('RateLimit-Policy', headers['RateLimit-Policy']);
    ctx.set('RateLimit', headers.RateLimit);
    if (count > limit) {
      throw errors.rateLimited(
        `Rate limit of ${limit} requests per ${WINDOW_SEC} s for this API key reached; retry in ${resetSec} s`,
        { limit, windowSec: WINDOW_SEC, retryAfterSec: resetSec },
        { ...headers, 'Retry-After': String(resetSec) },
      );
    }
    return next();
  };
  return (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (!principal) return next();
    const limit = deps.limitFor(principal);
    const counted = deps.counter.count(principal.keyId);
    // Counted in memory (nearly always): settled in this tick, no promise.
    return counted instanceof Promise
      ? counted.then((c) => admit(ctx, next, limit, c))
      : admit(ctx, next, limit, counted);
  };
}
