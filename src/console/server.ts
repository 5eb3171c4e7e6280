// The console as Koa middleware, mounted by the REST app after authentication and the rate limit: `/`
// and `/console/*`, three @koa/router routers. Pages are shells (routes/shells.ts: no project data;
// anyone may load them); their content comes from `/console/f/*` fragments (routes/fragments.ts) and the
// live stream `/console/f/live`, which need a key like the API does (the Authorization header, resolved
// into ctx.state.principal by the REST app's auth middleware). A path none of them knows goes on to the
// REST app, which answers 404.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import type { ConsoleData } from './data.js';
import { prepareDiagrams } from './diagram.js';
import { BASE } from './layout.js';
import { LiveHub } from './live.js';
import { extensionZip, serveExtensionZip } from './pages/extension.js';
import { fragmentRoutes, principalOf } from './routes/fragments.js';
import { queryId } from './routes/ids.js';
import { shellRoutes } from './routes/shells.js';

export interface ConsoleOptions {
  data: ConsoleData;
  /** Origins besides this service that screenshots are loaded from (an S3 endpoint), for the CSP. */
  imageOrigins?: string[];
  /** The built browser extension to serve; absent: dist/extension.zip of the checkout (pages/extension.ts). */
  extensionZip?: string;
}

export interface Console {
  middleware: Koa.Middleware;
  live: LiveHub;
  close(): void;
}

const require = createRequire(import.meta.url);
const htmxDir = path.dirname(require.resolve('htmx.org'));
const ownDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'static');
// htmx and its SSE extension as one script: as two deferred ones, htmx could process the page (it
// starts at once when the document is already interactive) before the extension registered, and a
// page's stream then never opened.
const STATIC: Record<string, { files: string[]; type: string }> = {
  'htmx-sse.js': {
    files: [path.join(htmxDir, 'htmx.min.js'), path.join(htmxDir, 'ext', 'hx-sse.min.js')],
    type: 'text/javascript',
  },
  'console.js': { files: [path.join(ownDir, 'console.js')], type: 'text/javascript' },
  'inspect.js': { files: [path.join(ownDir, 'inspect.js')], type: 'text/javascript' },
  'console.css': { files: [path.join(ownDir, 'console.css')], type: 'text/css' },
};

export async function createConsole(opts: ConsoleOptions): Promise<Console> {
  const { data } = opts;
  await prepareDiagrams();
  const live = new LiveHub();
  const unsubscribe = data.onRunChange((runId, projectId) => live.runChanged(runId, projectId));
  const unsubscribeSessions = data.onSessionChange((sessionId, projectId, kind) =>
    live.sessionChanged(sessionId, projectId, kind),
  );
  const files = new Map(
    Object.entries(STATIC).map(([name, s]) => [
      name,
      { body: Buffer.concat(s.files.flatMap((f) => [fs.readFileSync(f), Buffer.from('\n;\n')])), type: s.type },
    ]),
  );
  const csp = contentSecurityPolicy(opts.imageOrigins ?? []);

  const own = new Router({ prefix: BASE });
  own.get('/', (ctx) => ctx.redirect(`${BASE}/runs`));
  own.get('/static/:file', async (ctx, next) => {
    const file = files.get(ctx.params.file!);
    if (!file) return next();
    ctx.type = file.type;
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = file.body;
  });
  // The built browser extension: its code, nothing of any project, so anyone may download it.
  own.get('/extension.zip', (ctx) => serveExtensionZip(ctx, extensionZip(opts.extensionZip)));
  own.get('/f/live', (ctx) => {
    const principal = principalOf(ctx);
    ctx.respond = false;
    live.open(ctx.res, principal.projectId, queryId(ctx, 'run', 'run'), queryId(ctx, 'session', 'session'));
  });
  // Only reached without JavaScript: the key is never read from a form post.
  own.post('/sign-in', (ctx) => ctx.redirect(`${BASE}/sign-in`));
  // The routers' middleware take Koa's context (they add `params` to it themselves).
  const routes = compose(
    [own, shellRoutes(), fragmentRoutes(data, () => extensionZip(opts.extensionZip))].map(
      (r) => r.routes() as Koa.Middleware,
    ),
  );

  const middleware: Koa.Middleware = async (ctx, next) => {
    if (ctx.path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) return ctx.redirect(`${BASE}/runs`);
    if (ctx.path !== BASE && !ctx.path.startsWith(`${BASE}/`)) return next();
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    return routes(ctx, next);
  };

  return {
    middleware,
    live,
    close: () => {
      unsubscribe();
      unsubscribeSessions();
      live.close();
    },
  };
}

function contentSecurityPolicy(imageOrigins: string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: ${imageOrigins.join(' ')}`.trim(),
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
