import Koa from 'koa';
import { koaBody } from 'koa-body';
import { failureLog, normaliseError } from '../errors.js';
import type { Logger } from '../log.js';
import { type Health, healthMiddleware } from './health.js';
import type { IdempotencyStore } from './idempotency.js';
import { type Authenticate, authMiddleware } from './middleware/auth.js';
import { errorMiddleware } from './middleware/errors.js';
import { observeMiddleware, type RequestSample } from './middleware/observe.js';
import { type RateLimitDeps, rateLimitMiddleware } from './middleware/rate-limit.js';
import { storableBodyMiddleware, storableRequestMiddleware } from './middleware/storable-text.js';
import { buildOpenApiDocument, type ExtraPaths, OPENAPI_PATH, type OpenApiInfo } from './openapi.js';
import type { Api } from './route.js';

export interface RestAppDeps {
  api: Api;
  authenticate: Authenticate;
  log: Logger;
  /** The per-key rate limit; absent means none. */
  rateLimit?: RateLimitDeps;
  idempotency?: IdempotencyStore;
  info: OpenApiInfo;
  /** Endpoints served beside /api/v1 (OAuth, MCP), for /openapi.json. */
  extraPaths?: ExtraPaths;
  /** What the service sends to subscribers (OpenAPI 3.1 `webhooks`), for /openapi.json. */
  webhooks?: ExtraPaths;
  /** Keys that sign cookies (the OAuth provider's, which it sets through this app). */
  cookieKeys?: string[];
  /**
   * Other doors mounted beside /api/v1: `beforeAuth` ones read their own credentials and bodies
   * (the OAuth provider under /oauth, its metadata); `afterBody` ones see the principal and the parsed
   * JSON body (MCP at /mcp).
   */
  mounts?: { beforeAuth?: Koa.Middleware[]; afterBody?: Koa.Middleware[] };
  /** Served beside the API, after authentication and the rate limit (the console: `/` and `/console/*`). */
  pages?: Koa.Middleware;
  /** /healthz and /readyz (health.ts); absent: neither is served. */
  health?: Health;
  /** Requests slower than this are logged (ms). */
  slowRequestMs?: number;
  /** Each request answered, for metrics. */
  observe?(sample: RequestSample): void;
  /** Static HTML pages served without a key (path → HTML), e.g. the demo page at /demo. */
  staticPages?: Record<string, string>;
}

export function createRestApp(deps: RestAppDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  // An error after the answer began (a file stream that broke mid-download): Koa would print it with
  // its stack on stderr; it goes through the logger.
  const logFailure = failureLog(deps.log);
  app.on('error', (err: unknown, ctx?: Koa.Context) =>
    logFailure('answer failed after it began', err, normaliseError(err), { path: ctx?.path }),
  );
  if (deps.cookieKeys) app.keys = deps.cookieKeys;
  app.use(observeMiddleware({ log: deps.log, slowMs: deps.slowRequestMs ?? 1_000, observe: deps.observe }));
  app.use(errorMiddleware(deps.log));
  if (deps.health) app.use(healthMiddleware(deps.health));
  // One rule for text PostgreSQL cannot store, where the request enters (before any route sees it).
  app.use(storableRequestMiddleware());
  // The document is built on first request, once every route has been added.
  let document: string | undefined;
  app.use(async (ctx, next) => {
    if (ctx.path !== OPENAPI_PATH || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    document ??= JSON.stringify(buildOpenApiDocument(deps.api.routes, deps.info, deps.extraPaths, deps.webhooks));
    ctx.type = 'application/json';
    ctx.body = document;
  });
  const pages = deps.staticPages ?? {};
  app.use(async (ctx, next) => {
    const page = Object.hasOwn(pages, ctx.path) ? pages[ctx.path] : undefined;
    if (page === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  for (const mount of deps.mounts?.beforeAuth ?? []) app.use(mount);
  app.use(authMiddleware(deps.authenticate));
  if (deps.rateLimit) app.use(rateLimitMiddleware(deps.rateLimit));
  // Before the body parser: the pages read their own (small, urlencoded) form bodies.
  if (deps.pages) app.use(deps.pages);
  const parseBody = koaBody({ jsonLimit: '2mb', multipart: false, text: false, urlencoded: false });
  // Routes that stream their body themselves (an imported report) get it unread.
  app.use((ctx, next) => (deps.api.readsOwnBody(ctx.method, ctx.path) ? next() : parseBody(ctx, next)));
  app.use(storableBodyMiddleware());
  for (const mount of deps.mounts?.afterBody ?? []) app.use(mount);
  app.use(deps.api.middleware({ idempotency: deps.idempotency }));
  return app;
}
