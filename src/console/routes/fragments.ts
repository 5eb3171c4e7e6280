// The console's fragments (`/console/f/*`): the HTML a page shell loads with the tab's key. Each needs
// a principal (401 asks the page for a key again); a POST needs scope write. A refusal is shown in the
// page as a message and answered 200, since a browser logs every 4xx/5xx fetch as a console error.
import { Router, type RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import { hasScope, type Principal } from '../../auth/principal.js';
import { errors, normaliseError } from '../../errors.js';
import type { ConsoleData } from '../data.js';
import { type Html, html } from '../html.js';
import { BASE } from '../layout.js';
import { assetsFragment } from '../pages/assets.js';
import { caseHistoryFragment, setQuarantine } from '../pages/case-history.js';
import { caseFragment, casesFragment } from '../pages/cases.js';
import { compareFragment } from '../pages/compare.js';
import { extensionFragment } from '../pages/extension.js';
import { failuresFilter, failuresFragment } from '../pages/failures.js';
import { decideFragment, healingFragment } from '../pages/healing.js';
import { machinesFragment } from '../pages/machines.js';
import { readinessFragment, releasesFragment } from '../pages/releases.js';
import { cancelRun, runFragment, startRun } from '../pages/run.js';
import { runsControls, runsFilter, runsFragment } from '../pages/runs.js';
import { sessionFragment } from '../pages/session.js';
import { sessionsFragment } from '../pages/sessions.js';
import { idsValid, queryId, queryText } from './ids.js';

/** A fragment's content; undefined when the handler answered on its own (a redirect). */
type Fragment = (ctx: Koa.Context, principal: Principal, params: Record<string, string>) => Promise<Html | undefined>;

/** The fragment as a route: no caching, a principal (and write for a POST), errors shown in the page. */
function answer(fragment: Fragment): RouterMiddleware {
  return async (ctx, next) => {
    if (!idsValid(ctx.params)) return next();
    ctx.set('Cache-Control', 'no-store');
    try {
      const principal = principalOf(ctx);
      if (ctx.method === 'POST' && !hasScope(principal, 'write'))
        throw errors.forbidden(`This needs a key with scope "write"; this key has "${principal.scope}"`);
      const out = await fragment(ctx, principal, ctx.params);
      if (out === undefined) return;
      ctx.type = 'text/html';
      ctx.body = out.text;
    } catch (err) {
      const e = normaliseError(err);
      ctx.status = e.status === 401 ? 401 : 200;
      ctx.set('X-Console-Error', `${e.status} ${e.code}`);
      ctx.type = 'text/html';
      ctx.body = html`<p class="error" role="alert">${e.message}</p>`.text;
    }
  };
}

/** The principal the REST app resolved from the request's key, or 401. */
export function principalOf(ctx: Koa.Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw errors.unauthorized(ctx.state.authError);
  return principal;
}

/** This service's origin as the browser reached it (links in fragments). */
const originOf = (ctx: Koa.Context) => `${ctx.protocol}://${ctx.host}`;

/** `builtExtension`: the browser extension's zip when this service has one (the Extension page links it). */
export function fragmentRoutes(data: ConsoleData, builtExtension: () => string | undefined = () => undefined): Router {
  const router = new Router({ prefix: `${BASE}/f` });
  router.get('/whoami', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const principal = principalOf(ctx);
    ctx.type = 'text/plain';
    ctx.body = `${principal.projectId} · ${principal.scope}`;
  });
  const shown = { ...runFragments(data), ...caseFragments(data), ...otherFragments(data, builtExtension) };
  for (const [path, fragment] of Object.entries(shown)) router.get(path, answer(fragment));
  for (const [path, fragment] of Object.entries(actions(data))) router.post(path, answer(fragment));
  return router;
}

/** Runs, sessions and their failures, by path. */
function runFragments(data: ConsoleData): Record<string, Fragment> {
  return {
    '/sessions': (ctx, p) => sessionsFragment(data, p, { status: queryText(ctx, 'status') }),
    '/runs-controls': (ctx, p) => runsControls(data, p, runsFilter(ctx.query)),
    '/runs': (ctx, p) => runsFragment(data, p, runsFilter(ctx.query)),
    '/runs/:run': (ctx, p, { run }) => runFragment(data, p, run!, originOf(ctx)),
    '/sessions/:session': (_ctx, p, { session }) => sessionFragment(data, p, session!),
    '/compare': (ctx, p) => compareFragment(data, p, comparedRun(ctx, 'a'), comparedRun(ctx, 'b')),
    '/failures': (ctx, p) => failuresFragment(data, p, failuresFilter(ctx.query), originOf(ctx)),
  };
}

/** Test cases, their history and the healing of their locators, by path. */
function caseFragments(data: ConsoleData): Record<string, Fragment> {
  return {
    '/cases': (_ctx, p) => casesFragment(data, p),
    '/cases/:testCase': (_ctx, p, { testCase }) => caseFragment(data, p, testCase!),
    '/cases/:testCase/history': (_ctx, p, { testCase }) => caseHistoryFragment(data, p, testCase!),
    '/healing': (ctx, p) => healingFragment(data, p, queryText(ctx, 'status'), originOf(ctx)),
  };
}

/** Assets, releases, the machines' diagrams and the browser extension, by path. */
function otherFragments(data: ConsoleData, builtExtension: () => string | undefined): Record<string, Fragment> {
  return {
    '/assets': (ctx, p) => assetsFragment(data, p, queryText(ctx, 'bucket'), originOf(ctx)),
    '/releases': (_ctx, p) => releasesFragment(data, p),
    '/releases/:release': (_ctx, p, { release }) => readinessFragment(data, p, release!),
    '/machines': async () => machinesFragment(),
    '/extension': (ctx, p) => extensionFragment(data, p, originOf(ctx), Boolean(builtExtension())),
  };
}

/** What a page's forms post (scope write), by path. */
function actions(data: ConsoleData): Record<string, Fragment> {
  return {
    '/runs': async (ctx, p) => startRun(ctx, data, p, await readForm(ctx)),
    '/runs/:run/cancel': (ctx, p, { run }) => cancelRun(data, p, run!, originOf(ctx)),
    '/cases/:testCase/history/:quarantineAction': (_ctx, p, { testCase, quarantineAction }) =>
      setQuarantine(data, p, testCase!, quarantineAction === 'quarantine'),
    '/healing/:proposal/:decision': async (ctx, p, { proposal, decision }) =>
      decideFragment(data, p, proposal!, decision as 'accept' | 'reject', await readForm(ctx), originOf(ctx)),
  };
}

/** A run to compare, from the query, or a validation error. */
function comparedRun(ctx: Koa.Context, name: 'a' | 'b'): string {
  const id = queryId(ctx, name, 'run');
  if (!id) throw errors.validation('Choose two runs to compare (?a=otr_…&b=otr_…)');
  return id;
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
