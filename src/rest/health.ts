// /healthz (the process answers) and /readyz (it can serve: its database answers and it is not
// draining), for load balancers and orchestrators. Neither needs a key; neither says more than that.
import type Koa from 'koa';

export interface Readiness {
  ready: boolean;
  /** Each check by name: `ok` or why not. */
  checks: Record<string, string>;
}

export interface Health {
  ready(): Promise<Readiness>;
}

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';

/** Serves the two paths (GET or HEAD), before authentication. */
export function healthMiddleware(health: Health): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === HEALTH_PATH) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path !== READY_PATH) return next();
    const readiness = await health.ready();
    ctx.set('Cache-Control', 'no-store');
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { status: readiness.ready ? 'ready' : 'not ready', checks: readiness.checks };
  };
}

/** Readiness from a database probe and the draining flag; the probe gets `timeoutMs`. */
export function readiness(deps: { probe(): Promise<unknown>; draining(): boolean; timeoutMs?: number }): Health {
  return {
    async ready() {
      const checks: Record<string, string> = {};
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          deps.probe(),
          new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`no answer within ${deps.timeoutMs ?? 2_000} ms`)),
              deps.timeoutMs ?? 2_000,
            );
          }),
        ]);
        checks.database = 'ok';
      } catch {
        // No detail: the path needs no key, and connection errors name hosts and ports.
        checks.database = 'unreachable';
      } finally {
        clearTimeout(timer);
      }
      checks.draining = deps.draining() ? 'draining: not taking new work' : 'ok';
      return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
    },
  };
}
