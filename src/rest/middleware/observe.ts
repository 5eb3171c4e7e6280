// First in the chain: times every request and reports it by route template (metrics), logs the slow
// ones, and logs refused credentials (at most one line per address a minute: anyone can provoke them).
import type Koa from 'koa';
import { type Logger, throttledLog } from '../../log.js';

export interface RequestSample {
  method: string;
  /** The matched route's template (`/api/v1/otp/runs/:id`), or `unmatched`: never the raw path. */
  route: string;
  status: number;
  ms: number;
}

export interface ObserveOptions {
  log: Logger;
  /** A request slower than this is logged at info. */
  slowMs: number;
  observe?(sample: RequestSample): void;
}

export function observeMiddleware(options: ObserveOptions): Koa.Middleware {
  const refused = throttledLog(options.log);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const sample = {
        method: ctx.method,
        route: typeof route === 'string' ? route : 'unmatched',
        status: ctx.status,
        ms,
      };
      options.observe?.(sample);
      if (ms >= options.slowMs) options.log.info('slow request', { ...sample, ms: Math.round(ms) });
      if (ctx.status === 401 && ctx.get('authorization')) {
        refused(`rest:${ctx.ip}`, 'refused credentials', {
          transport: 'rest',
          address: ctx.ip,
          route: sample.route,
          reason: ctx.state.authError,
        });
      }
    }
  };
}
