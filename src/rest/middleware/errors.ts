import type Koa from 'koa';
import { AppError, ErrorCode, errors, failureLog, normaliseError } from '../../errors.js';
import type { Logger } from '../../log.js';

/** First in the chain: every failure, and every unmatched route, leaves as the one error body. */
export function errorMiddleware(log: Logger): Koa.Middleware {
  const logFailure = failureLog(log);
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw errors.notFound(`Route ${ctx.method} ${ctx.path}`);
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        throw new AppError(
          ErrorCode.methodNotAllowed,
          `${ctx.path} does not take ${ctx.method}; it takes ${ctx.response.get('Allow') || 'no method'}`,
        );
      }
    } catch (err) {
      const appError = normaliseError(err);
      logFailure('request failed', err, appError, { method: ctx.method, path: ctx.path });
      ctx.status = appError.status;
      ctx.body = appError.toBody();
      for (const [name, value] of Object.entries(appError.extra.headers ?? {})) ctx.set(name, value);
    }
  };
}
