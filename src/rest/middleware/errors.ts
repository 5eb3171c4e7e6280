import type Koa from 'koa';
import { errors, normaliseError } from '../../errors.js';
import type { Logger } from '../../log.js';

/** First in the chain: every failure, and every unmatched route, leaves as the one error body. */
export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw errors.notFound(`Route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const appError = normaliseError(err);
      if (appError.status >= 500) log.error('request failed', { method: ctx.method, path: ctx.path, err });
      ctx.status = appError.status;
      ctx.body = appError.toBody();
      for (const [name, value] of Object.entries(appError.extra.headers ?? {})) ctx.set(name, value);
    }
  };
}
