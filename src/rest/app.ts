import Koa from 'koa';
import { koaBody } from 'koa-body';
import type { Api } from './route.js';
import { errorMiddleware } from './middleware/errors.js';
import { authMiddleware, type Authenticate } from './middleware/auth.js';
import { rateLimitMiddleware, type RateLimitDeps } from './middleware/rate-limit.js';
import { buildOpenApiDocument, OPENAPI_PATH, type OpenApiInfo } from './openapi.js';
import type { IdempotencyStore } from './idempotency.js';
import type { Logger } from '../log.js';

export interface RestAppDeps {
  api: Api;
  authenticate: Authenticate;
  log: Logger;
  /** The per-key rate limit; absent means none. */
  rateLimit?: RateLimitDeps;
  idempotency?: IdempotencyStore;
  info: OpenApiInfo;
}

export function createRestApp(deps: RestAppDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  app.use(errorMiddleware(deps.log));
  // The document is built on first request, once every route has been added.
  let document: string | undefined;
  app.use(async (ctx, next) => {
    if (ctx.path !== OPENAPI_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    document ??= JSON.stringify(buildOpenApiDocument(deps.api.routes, deps.info));
    ctx.type = 'application/json';
    ctx.body = document;
  });
  app.use(authMiddleware(deps.authenticate));
  if (deps.rateLimit) app.use(rateLimitMiddleware(deps.rateLimit));
  app.use(koaBody({ jsonLimit: '2mb', multipart: false, text: false, urlencoded: false }));
  app.use(deps.api.middleware({ idempotency: deps.idempotency }));
  return app;
}
