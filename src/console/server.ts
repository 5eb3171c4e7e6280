// The console as Koa middleware, mounted by the REST app after authentication and the rate limit: `/`
// and `/console/*`. Pages are shells (no project data; anyone may load them); their content comes from
// `/console/f/*` fragments and the live stream `/console/f/live`, which need a key like the API does
// (the Authorization header, resolved into ctx.state.principal by the REST app's auth middleware).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Koa from 'koa';
import { hasScope, type Principal } from '../auth/principal.js';
import { errors, normaliseError } from '../errors.js';
import type { ConsoleData } from './data.js';
import { prepareDiagrams } from './diagram.js';
import { type Html, html } from './html.js';
import { BASE, page, signInPage } from './layout.js';
import { LiveHub } from './live.js';
import { assetsFragment } from './pages/assets.js';
import { caseHistoryFragment, setQuarantine } from './pages/case-history.js';
import { caseFragment, casesFragment } from './pages/cases.js';
import { compareFragment } from './pages/compare.js';
import { failuresFilter, failuresFragment } from './pages/failures.js';
import { decideFragment, healingFragment } from './pages/healing.js';
import { machinesFragment } from './pages/machines.js';
import { readinessFragment, releasesFragment } from './pages/releases.js';
import { cancelRun, runFragment, startRun } from './pages/run.js';
import { runsControls, runsFilter, runsFragment } from './pages/runs.js';
import { sessionFragment } from './pages/session.js';
import { sessionsFragment } from './pages/sessions.js';

export interface ConsoleOptions {
  data: ConsoleData;
  /** Origins besides this service that screenshots are loaded from (an S3 endpoint), for the CSP. */
  imageOrigins?: string[];
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

// biome-ignore lint/suspicious/noConfusingVoidType: a fragment that answered on its own (a redirect) returns nothing
type Fragment = (ctx: Koa.Context, principal: Principal, match: RegExpExecArray) => Promise<Html | string | void>;

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
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: ${(opts.imageOrigins ?? []).join(' ')}`.trim(),
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

  const q = (ctx: Koa.Context, name: string) =>
    typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : '';
  const qs = (ctx: Koa.Context) => (ctx.querystring ? `?${ctx.querystring}` : '');

  // Page shells: no data of any project; the fragments bring it with the tab's key.
  const pages: Array<[RegExp, (ctx: Koa.Context, m: RegExpExecArray) => string]> = [
    [/^\/sign-in$/, () => signInPage()],
    [
      /^\/runs$/,
      (ctx) =>
        page({
          title: 'Runs',
          nav: 'runs',
          once: `${BASE}/f/runs-controls${qs(ctx)}`,
          fragment: `${BASE}/f/runs${qs(ctx)}`,
          live: '',
          refreshOn: ['runs-changed'],
        }),
    ],
    [
      /^\/runs\/(otr_[a-z0-9]{1,60})$/,
      (_ctx, m) =>
        page({
          title: `Run ${m[1]}`,
          nav: 'runs',
          fragment: `${BASE}/f/runs/${m[1]}`,
          live: `?run=${m[1]}`,
          refreshOn: ['run-changed'],
          wide: true,
        }),
    ],
    [
      /^\/sessions$/,
      (ctx) =>
        page({
          title: 'Executor sessions',
          nav: 'sessions',
          fragment: `${BASE}/f/sessions${qs(ctx)}`,
          live: '',
          refreshOn: ['sessions-changed'],
        }),
    ],
    [
      /^\/sessions\/(ots_[a-z0-9]{1,60})$/,
      (_ctx, m) =>
        page({
          title: `Session ${m[1]}`,
          nav: 'sessions',
          fragment: `${BASE}/f/sessions/${m[1]}`,
          live: `?session=${m[1]}`,
          refreshOn: ['sessions-changed', 'session-changed'],
          wide: true,
        }),
    ],
    [
      /^\/compare$/,
      (ctx) =>
        page({
          title: 'Two runs compared',
          nav: 'runs',
          fragment: `${BASE}/f/compare${qs(ctx)}`,
          live: '',
          refreshOn: ['runs-changed'],
          wide: true,
        }),
    ],
    [
      /^\/failures$/,
      (ctx) =>
        page({
          title: 'Failures by cause',
          nav: 'failures',
          fragment: `${BASE}/f/failures${qs(ctx)}`,
          live: '',
          refreshOn: ['runs-changed'],
          wide: true,
        }),
    ],
    [/^\/cases$/, () => page({ title: 'Test cases and plans', nav: 'cases', fragment: `${BASE}/f/cases` })],
    [
      /^\/cases\/(tc_[a-z0-9]{1,60})$/,
      (_ctx, m) => page({ title: 'Test case', nav: 'cases', fragment: `${BASE}/f/cases/${m[1]}` }),
    ],
    [
      /^\/cases\/(tc_[a-z0-9]{1,60})\/history$/,
      (_ctx, m) => page({ title: 'Test case history', nav: 'cases', fragment: `${BASE}/f/cases/${m[1]}/history` }),
    ],
    [
      /^\/healing$/,
      (ctx) => page({ title: 'Locator healing', nav: 'healing', fragment: `${BASE}/f/healing${qs(ctx)}` }),
    ],
    [/^\/assets$/, (ctx) => page({ title: 'Assets', nav: 'assets', fragment: `${BASE}/f/assets${qs(ctx)}` })],
    [/^\/releases$/, () => page({ title: 'Releases', nav: 'releases', fragment: `${BASE}/f/releases` })],
    [
      /^\/releases\/(rel_[a-z0-9]{1,60})$/,
      (_ctx, m) =>
        page({ title: 'Release readiness', nav: 'releases', fragment: `${BASE}/f/releases/${m[1]}`, wide: true }),
    ],
    [
      /^\/machines$/,
      () => page({ title: 'The machines', nav: 'machines', fragment: `${BASE}/f/machines`, wide: true }),
    ],
  ];

  const gets: Array<[RegExp, Fragment]> = [
    [/^\/whoami$/, async (_ctx, p) => `${p.projectId} · ${p.scope}`],
    [/^\/sessions$/, (ctx, p) => sessionsFragment(data, p, { status: q(ctx, 'status') })],
    [/^\/runs-controls$/, (ctx, p) => runsControls(data, p, runsFilter(ctx.query))],
    [/^\/runs$/, (ctx, p) => runsFragment(data, p, runsFilter(ctx.query))],
    [/^\/runs\/(otr_[a-z0-9]{1,60})$/, (ctx, p, m) => runFragment(data, p, m[1]!, `${ctx.protocol}://${ctx.host}`)],
    [/^\/sessions\/(ots_[a-z0-9]{1,60})$/, (_ctx, p, m) => sessionFragment(data, p, m[1]!)],
    [/^\/compare$/, (ctx, p) => compareFragment(data, p, runIdParam(q(ctx, 'a')), runIdParam(q(ctx, 'b')))],
    [/^\/failures$/, (ctx, p) => failuresFragment(data, p, failuresFilter(ctx.query), `${ctx.protocol}://${ctx.host}`)],
    [/^\/cases$/, (_ctx, p) => casesFragment(data, p)],
    [/^\/cases\/(tc_[a-z0-9]{1,60})$/, (_ctx, p, m) => caseFragment(data, p, m[1]!)],
    [/^\/cases\/(tc_[a-z0-9]{1,60})\/history$/, (_ctx, p, m) => caseHistoryFragment(data, p, m[1]!)],
    [/^\/healing$/, (ctx, p) => healingFragment(data, p, q(ctx, 'status'), `${ctx.protocol}://${ctx.host}`)],
    [/^\/assets$/, (ctx, p) => assetsFragment(data, p, q(ctx, 'bucket'), `${ctx.protocol}://${ctx.host}`)],
    [/^\/releases$/, (_ctx, p) => releasesFragment(data, p)],
    [/^\/releases\/(rel_[a-z0-9]{1,60})$/, (_ctx, p, m) => readinessFragment(data, p, m[1]!)],
    [/^\/machines$/, async () => machinesFragment()],
  ];
  const posts: Array<[RegExp, Fragment]> = [
    [/^\/runs$/, async (ctx, p) => startRun(ctx, data, p, await readForm(ctx))],
    [
      /^\/runs\/(otr_[a-z0-9]{1,60})\/cancel$/,
      (ctx, p, m) => cancelRun(data, p, m[1]!, `${ctx.protocol}://${ctx.host}`),
    ],
    [
      /^\/cases\/(tc_[a-z0-9]{1,60})\/history\/(quarantine|release)$/,
      (_ctx, p, m) => setQuarantine(data, p, m[1]!, m[2] === 'quarantine'),
    ],
    [
      /^\/healing\/(heal_[a-z0-9]{1,60})\/(accept|reject)$/,
      async (ctx, p, m) =>
        decideFragment(
          data,
          p,
          m[1]!,
          m[2] as 'accept' | 'reject',
          await readForm(ctx),
          `${ctx.protocol}://${ctx.host}`,
        ),
    ],
  ];

  const fragment = async (ctx: Koa.Context, sub: string): Promise<boolean> => {
    const table = ctx.method === 'GET' || ctx.method === 'HEAD' ? gets : ctx.method === 'POST' ? posts : [];
    for (const [pattern, handler] of table) {
      const m = pattern.exec(sub);
      if (!m) continue;
      ctx.set('Cache-Control', 'no-store');
      try {
        const principal = ctx.state.principal as Principal | undefined;
        if (!principal) throw errors.unauthorized(ctx.state.authError);
        if (ctx.method === 'POST' && !hasScope(principal, 'write')) {
          throw errors.forbidden(`This needs a key with scope "write"; this key has "${principal.scope}"`);
        }
        const out = await handler(ctx, principal, m);
        if (out === undefined) return true;
        ctx.type = typeof out === 'string' && sub === '/whoami' ? 'text/plain' : 'text/html';
        ctx.body = String(out);
      } catch (err) {
        const e = normaliseError(err);
        // A refusal is shown in the page as a message, answered 200 (a browser logs every 4xx/5xx
        // fetch as a console error); only 401 keeps its status: the page then asks for a key again.
        ctx.status = e.status === 401 ? 401 : 200;
        ctx.set('X-Console-Error', `${e.status} ${e.code}`);
        ctx.type = 'text/html';
        ctx.body = html`<p class="error" role="alert">${e.message}</p>`.text;
      }
      return true;
    }
    return false;
  };

  const middleware: Koa.Middleware = async (ctx, next) => {
    if (ctx.path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) return ctx.redirect(`${BASE}/runs`);
    if (ctx.path !== BASE && !ctx.path.startsWith(`${BASE}/`)) return next();
    const sub = ctx.path.slice(BASE.length) || '/';
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (sub === '/' && ctx.method === 'GET') return ctx.redirect(`${BASE}/runs`);
    if (sub.startsWith('/static/') && ctx.method === 'GET') {
      const file = files.get(sub.slice('/static/'.length));
      if (!file) return next();
      ctx.type = file.type;
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = file.body;
      return;
    }
    if (sub === '/f/live' && ctx.method === 'GET') {
      const principal = ctx.state.principal as Principal | undefined;
      if (!principal) throw errors.unauthorized(ctx.state.authError);
      const runId = q(ctx, 'run');
      const sessionId = q(ctx, 'session');
      ctx.respond = false;
      live.open(
        ctx.res,
        principal.projectId,
        /^otr_[a-z0-9]{1,60}$/.test(runId) ? runId : undefined,
        /^ots_[a-z0-9]{1,60}$/.test(sessionId) ? sessionId : undefined,
      );
      return;
    }
    if (sub.startsWith('/f/')) {
      if (await fragment(ctx, sub.slice(2))) return;
      return next();
    }
    if (sub === '/sign-in' && ctx.method === 'POST') {
      // Only reached without JavaScript: the key is never read from a form post.
      return ctx.redirect(`${BASE}/sign-in`);
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    for (const [pattern, render] of pages) {
      const m = pattern.exec(sub);
      if (!m) continue;
      ctx.type = 'text/html';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = render(ctx, m);
      return;
    }
    return next();
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

/** A run id from a query parameter, or a validation error. */
function runIdParam(value: string): string {
  if (!/^otr_[a-z0-9]{1,60}$/.test(value)) throw errors.validation('Choose two runs to compare (?a=otr_…&b=otr_…)');
  return value;
}

/** An urlencoded form body (htmx posts forms so), at most 16 KiB. */
async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  let text = '';
  for await (const chunk of ctx.req) {
    text += chunk;
    if (text.length > 16_384) throw errors.validation('The form is too large');
  }
  return new URLSearchParams(text);
}
