// run.start.allowedOrigins, enforced on two layers (docs/runner.md "allowedOrigins"):
// - the gate (gate.ts): the run's browser context has a SOCKS5 proxy of its own that connects only to
//   the host:port pairs of the list. Every connection of the context goes through it, so it is what
//   guarantees that nothing else is reached: redirect hops, popups, workers, prefetches included.
// - the route: context.route() sees the first URL of each request and aborts one whose origin is not
//   in the list before anything is sent (net::ERR_BLOCKED_BY_CLIENT; exact to the scheme, which the
//   gate cannot see inside a tunnel). routeWebSocket() closes the page's WebSockets likewise.
// A refused navigation of a page's main frame (a popup's too, and any hop of its redirects) is
// remembered from the context's request events, so that the step fails with E_NAVIGATION_BLOCKED.
import type { BrowserContext, Frame, Request } from 'playwright-core';
import { originOf, urlAllowed } from '../otp/protocol/origins.js';
import { canonicalHost, type Gate, openGate } from './gate.js';

export { originOf };

const REDIRECT = new Set([301, 302, 303, 307, 308]);
/** A refused navigation's error page commits within milliseconds; past this, it is not waited for. */
const ERROR_PAGE_MS = 1_000;

export class OriginGuard {
  private readonly origins = new Set<string>();
  /** host:port pairs the gate may connect to. */
  private readonly hosts = new Set<string>();
  /** Main-frame navigations refused since the last take(). */
  private blocked: string[] = [];
  /** Main-frame navigations (of every page, popups included) not answered yet. */
  private readonly pending = new Set<Request>();
  private wake?: () => void;
  private gate?: Gate;
  private readonly told = new Set<string>();

  constructor(
    allowedOrigins: readonly string[],
    private readonly log: (line: string) => void = () => undefined,
  ) {
    for (const entry of allowedOrigins) {
      const o = originOf(entry);
      if (!o) continue;
      this.origins.add(o.origin);
      this.hosts.add(`${o.host}:${o.port}`);
    }
  }

  allows(url: string): boolean {
    return urlAllowed(this.origins, url);
  }

  /** May the gate open a connection to host:port? */
  allowsHost(host: string, port: number): boolean {
    const canonical = canonicalHost(host);
    return canonical !== undefined && this.hosts.has(`${canonical}:${port}`);
  }

  /** Starts the run's gate; answers the proxy option of the run's browser context. */
  /** The gate already open, for another context of the same run (a retried test case's fresh one). */
  gateProxy(): { server: string } {
    if (!this.gate) throw new Error('the gate is not open');
    return { server: this.gate.server };
  }

  async openGate(): Promise<{ server: string }> {
    this.gate = await openGate({
      allows: (host, port) => this.allowsHost(host, port),
      refused: (host, port) => {
        // Once per destination: a hostile page must not flood the runner's log.
        const key = `${host}:${port}`;
        if (this.told.size < 100 && !this.told.has(key)) {
          this.told.add(key);
          this.log(`connection to ${key} refused: not in allowedOrigins`);
        }
      },
    });
    return { server: this.gate.server };
  }

  /** Why the gate could not connect to the origin of url, if it tried and failed. */
  failure(url: string): string | undefined {
    const o = originOf(url);
    return o && this.gate?.failure(o.host, o.port);
  }

  /** The blocked navigations seen since the last call. */
  take(): string[] {
    const seen = this.blocked;
    this.blocked = [];
    return seen;
  }

  /**
   * Waits (at most ms) until every main-frame navigation seen so far is answered (a response, or a
   * refusal): a popup opened by a step is refused a few milliseconds after the action returns, a page
   * may send itself elsewhere as it loads, and the refusal belongs to the step that caused it.
   */
  async settled(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.pending.size && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, until - Date.now());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.wake = undefined;
  }

  async install(context: BrowserContext): Promise<void> {
    context.on('request', (request) => this.seen(request));
    await context.route('**/*', (route) =>
      this.allows(route.request().url()) ? route.continue() : route.abort('blockedbyclient'),
    );
    await context.routeWebSocket(
      (url) => !this.allows(url.href),
      (ws) => ws.close({ code: 4003, reason: 'origin not allowed by run.start.allowedOrigins' }),
    );
  }

  async close(): Promise<void> {
    await this.gate?.close();
  }

  /** Every request of the context, first URLs and redirect hops alike (route() sees only the first). */
  private seen(request: Request): void {
    if (!request.isNavigationRequest()) return;
    const frame = frameKind(request);
    if (frame === 'sub') return;
    this.follow(request, request.redirectedFrom());
    // The step names the first; a page opening popups in a loop must not grow the list without end.
    if (!this.allows(request.url()) && this.blocked.length < 100) this.blocked.push(request.url());
  }

  /**
   * A navigation stays pending until it is answered; a redirect hands over to its next hop. A refused
   * one is answered when its error page has committed: Chromium commits it some milliseconds after the
   * request failed, and a navigation started before that would be cut short by it.
   */
  private follow(request: Request, from: Request | null): void {
    if (from) this.pending.delete(from);
    this.pending.add(request);
    const errorPage = errorPageOf(request);
    const done = () => {
      errorPage.cancel();
      this.pending.delete(request);
      this.wake?.();
    };
    request.response().then(async (response) => {
      if (response && REDIRECT.has(response.status()) && !request.redirectedTo()) return errorPage.cancel(); // its next hop takes over
      if (!response) await errorPage.committed;
      done();
    }, done);
  }
}

/**
 * Listens, from the moment a navigation is seen, for its frame to commit Chromium's error page;
 * `committed` resolves then, or after ERROR_PAGE_MS, or at once for a page Playwright does not know yet.
 */
function errorPageOf(request: Request): { committed: Promise<void>; cancel(): void } {
  let frame: Frame;
  try {
    frame = request.frame();
  } catch {
    return { committed: Promise.resolve(), cancel: () => undefined };
  }
  const page = frame.page();
  let cancel: () => void = () => undefined;
  const committed = new Promise<void>((resolve) => {
    const timer = setTimeout(() => cancel(), ERROR_PAGE_MS);
    const onCommit = (f: Frame) => f === frame && f.url().startsWith('chrome-error:') && cancel();
    cancel = () => {
      clearTimeout(timer);
      page.off('framenavigated', onCommit);
      resolve();
    };
    page.on('framenavigated', onCommit);
  });
  return { committed, cancel: () => cancel() };
}

/** 'main' and 'sub' frames of known pages; 'new page' for a popup's navigation, before its page exists. */
function frameKind(request: Request): 'main' | 'sub' | 'new page' {
  try {
    return request.frame().parentFrame() === null ? 'main' : 'sub';
  } catch {
    // Playwright has no frame yet for a new page's first navigation (and its redirect hops).
    return 'new page';
  }
}
