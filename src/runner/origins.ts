// run.start.allowedOrigins, enforced in the browser context for navigations, sub-resources and
// WebSockets. context.route() aborts a request to another origin (the page sees
// net::ERR_BLOCKED_BY_CLIENT); route() does not see WebSockets, so routeWebSocket() closes those.
// A blocked main-frame navigation is remembered so that the step fails with E_NAVIGATION_BLOCKED.
import type { BrowserContext } from 'playwright-core';

/** Schemes that load nothing from the network: always allowed. */
const LOCAL_SCHEMES = new Set(['about:', 'data:', 'blob:', 'javascript:']);

export class OriginGuard {
  private readonly allowed: Set<string>;
  /** Main-frame navigations refused since the last take(). */
  private blocked: string[] = [];

  constructor(allowedOrigins: readonly string[]) {
    this.allowed = new Set(allowedOrigins.flatMap((o) => {
      try {
        return [new URL(o).origin];
      } catch {
        return [];
      }
    }));
  }

  allows(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    return LOCAL_SCHEMES.has(parsed.protocol) || this.allowed.has(parsed.origin);
  }

  /** The blocked navigations seen since the last call. */
  take(): string[] {
    const seen = this.blocked;
    this.blocked = [];
    return seen;
  }

  async install(context: BrowserContext): Promise<void> {
    await context.route('**/*', async (route) => {
      const request = route.request();
      const url = request.url();
      if (this.allows(url)) return route.continue();
      if (request.isNavigationRequest() && isMainFrame(request)) this.blocked.push(url);
      return route.abort('blockedbyclient');
    });
    await context.routeWebSocket((url) => !this.allows(url.href), (ws) => ws.close({ code: 4003, reason: 'origin not allowed by run.start.allowedOrigins' }));
  }
}

function isMainFrame(request: { frame(): { parentFrame(): unknown } }): boolean {
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return false; // a service worker's request has no frame
  }
}
