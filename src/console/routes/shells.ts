// The console's pages as shells: no data of any project (anyone may load them); each names the
// fragment that brings its content with the tab's key, and the live events that refresh it.
import { Router } from '@koa/router';
import type Koa from 'koa';
import { BASE, page, signInPage } from '../layout.js';
import { idsValid } from './ids.js';

const qs = (ctx: Koa.Context) => (ctx.querystring ? `?${ctx.querystring}` : '');

type Shell = (path: string, render: (ctx: Koa.Context, params: Record<string, string>) => string) => void;

export function shellRoutes(): Router {
  const router = new Router({ prefix: BASE });
  const shell: Shell = (path, render) =>
    void router.get(path, async (ctx, next) => {
      if (!idsValid(ctx.params)) return next();
      ctx.type = 'text/html';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = render(ctx, ctx.params);
    });

  shell('/sign-in', () => signInPage());
  shell('/runs', (ctx) =>
    page({
      title: 'Runs',
      nav: 'runs',
      once: `${BASE}/f/runs-controls${qs(ctx)}`,
      fragment: `${BASE}/f/runs${qs(ctx)}`,
      live: '',
      refreshOn: ['runs-changed'],
    }),
  );
  shell('/runs/:run', (_ctx, { run }) =>
    page({
      title: `Run ${run}`,
      nav: 'runs',
      fragment: `${BASE}/f/runs/${run}`,
      live: `?run=${run}`,
      refreshOn: ['run-changed'],
      wide: true,
    }),
  );
  shell('/sessions', (ctx) =>
    page({
      title: 'Executor sessions',
      nav: 'sessions',
      fragment: `${BASE}/f/sessions${qs(ctx)}`,
      live: '',
      refreshOn: ['sessions-changed'],
    }),
  );
  shell('/sessions/:session', (_ctx, { session }) =>
    page({
      title: `Session ${session}`,
      nav: 'sessions',
      fragment: `${BASE}/f/sessions/${session}`,
      live: `?session=${session}`,
      refreshOn: ['sessions-changed', 'session-changed'],
      wide: true,
    }),
  );
  shell('/compare', (ctx) =>
    page({
      title: 'Two runs compared',
      nav: 'runs',
      fragment: `${BASE}/f/compare${qs(ctx)}`,
      live: '',
      refreshOn: ['runs-changed'],
      wide: true,
    }),
  );
  shell('/failures', (ctx) =>
    page({
      title: 'Failures by cause',
      nav: 'failures',
      fragment: `${BASE}/f/failures${qs(ctx)}`,
      live: '',
      refreshOn: ['runs-changed'],
      wide: true,
    }),
  );
  artifactShells(shell);
  return router;
}

/** Test cases, healing, assets, releases, the machines and the browser extension. */
function artifactShells(shell: Shell): void {
  shell('/cases', () => page({ title: 'Test cases and plans', nav: 'cases', fragment: `${BASE}/f/cases` }));
  shell('/cases/:testCase', (_ctx, { testCase }) =>
    page({ title: 'Test case', nav: 'cases', fragment: `${BASE}/f/cases/${testCase}` }),
  );
  shell('/cases/:testCase/history', (_ctx, { testCase }) =>
    page({ title: 'Test case history', nav: 'cases', fragment: `${BASE}/f/cases/${testCase}/history` }),
  );
  shell('/healing', (ctx) =>
    page({ title: 'Locator healing', nav: 'healing', fragment: `${BASE}/f/healing${qs(ctx)}` }),
  );
  shell('/assets', (ctx) => page({ title: 'Assets', nav: 'assets', fragment: `${BASE}/f/assets${qs(ctx)}` }));
  shell('/releases', () => page({ title: 'Releases', nav: 'releases', fragment: `${BASE}/f/releases` }));
  shell('/releases/:release', (_ctx, { release }) =>
    page({ title: 'Release readiness', nav: 'releases', fragment: `${BASE}/f/releases/${release}`, wide: true }),
  );
  shell('/machines', () =>
    page({ title: 'The machines', nav: 'machines', fragment: `${BASE}/f/machines`, wide: true }),
  );
  shell('/extension', () => extensionShell());
}

/** The browser extension's page: refreshed when a session comes or goes (extensions among them). */
function extensionShell(): string {
  return page({
    title: 'The browser extension',
    nav: 'extension',
    fragment: `${BASE}/f/extension`,
    live: '',
    refreshOn: ['sessions-changed'],
  });
}
