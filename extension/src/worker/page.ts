// The run's page: a window of its own (the user's other tabs are never touched), the debugger attached
// to its tab for the run, the page engine in an isolated world of its main frame (re-installed after
// each navigation), and what the page does that a step must know: its URL and load events, the
// console errors, navigations in flight. docs/extension.md says what this can and cannot reach.
import engineSource from 'otp:page-engine';
import type { Protocol } from 'devtools-protocol';
import { firstLine } from '../../../src/otp/protocol/step-rules.js';
import type { PageEngine } from '../page/engine.js';
import { Cdp, type Commands, type EventName, type EventParams } from './cdp.js';

const WORLD = 'otp-extension';
const MAX_CONSOLE_ERRORS = 100;
const MAX_NAVIGATIONS = 20;
const MAX_ERROR_CHARS = 2000;

/** Why the page can no longer be driven: its tab closed, the debugger detached (the user cancelled it). */
export class PageGone extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

type Waiter = () => void;

export interface PageHooks {
  /** A request the run's page makes (Fetch.requestPaused): the guard continues or fails it. */
  requestPaused(page: RunPage, params: Protocol.Fetch.RequestPausedEvent): void;
  /** A new window the page opens (Page.windowOpen). */
  windowOpen(url: string): void;
  /** The debugger went away (chrome.debugger.onDetach reason). */
  detached(reason: string): void;
}

export class RunPage {
  readonly cdp: Cdp;
  mainFrameId = '';
  url = 'about:blank';
  private loaderId = '';
  private readonly lifecycle = new Map<string, Set<string>>();
  /** Documents the main frame has committed (by loader id). */
  private readonly committed = new Set<string>();
  private mainLoading = false;
  private world?: Promise<number>;
  private worldId?: number;
  private readonly waiters = new Set<Waiter>();
  private errors: string[] = [];
  /** The main document's navigations since the last take, by request (their status, or why none came). */
  private navigations = new Map<string, { url: string; status?: number; statusText?: string; error?: string }>();
  gone?: string;

  private constructor(
    readonly tabId: number,
    readonly windowId: number,
    private readonly hooks: PageHooks,
  ) {
    this.cdp = new Cdp(
      tabId,
      (method, params) => this.event(method, params),
      (reason) =>
        this.lost(
          reason === 'target_closed'
            ? "the run's tab was closed"
            : `the debugger was detached from the run's tab (${reason})`,
          reason,
        ),
    );
  }

  /** A new window for a run, or the one a restarted worker finds again; the debugger attached. */
  static async open(hooks: PageHooks, existing?: { tabId: number; windowId: number }): Promise<RunPage> {
    let ids = existing;
    if (ids) await chrome.tabs.get(ids.tabId).catch(() => (ids = undefined));
    if (!ids) {
      const win = await chrome.windows.create({ url: 'about:blank', focused: false, width: 1280, height: 800 });
      ids = { tabId: win!.tabs![0]!.id!, windowId: win!.id! };
    }
    const page = new RunPage(ids.tabId, ids.windowId, hooks);
    await page.cdp.attach();
    await Promise.all([
      page.cdp.send('Page.enable'),
      page.cdp.send('Runtime.enable'),
      page.cdp.send('Log.enable'),
      page.cdp.send('Network.enable'),
      page.cdp.send('Page.setLifecycleEventsEnabled', { enabled: true }),
      page.cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] }),
    ]);
    const { frameTree } = await page.cdp.send('Page.getFrameTree');
    page.mainFrameId = frameTree.frame.id;
    page.url = frameTree.frame.url;
    page.loaderId = frameTree.frame.loaderId;
    page.cdp.replayUnheard();
    return page;
  }

  /** The tab closed or the debugger left: every later call fails at once with why. */
  lost(reason: string, detachReason?: string): void {
    if (this.gone) return;
    this.gone = reason;
    if (detachReason) this.hooks.detached(detachReason);
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves when check() holds (checked after each page event), or rejects after timeoutMs. */
  waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
        err ? reject(err) : resolve();
      };
      const waiter = () => {
        if (this.gone) done(new PageGone(this.gone));
        else if (check()) done();
      };
      const timer = setTimeout(() => done(new TimeoutError(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.add(waiter);
      waiter();
    });
  }

  /** What each page event changes (events not listed change nothing but wake the waiters). */
  private readonly handlers: { [E in EventName]?: (params: EventParams<E>) => void } = {
    'Fetch.requestPaused': (p) => this.hooks.requestPaused(this, p),
    'Page.frameNavigated': (p) => {
      if (p.frame.parentId) return;
      this.mainFrameId = p.frame.id;
      this.url = p.frame.url;
      this.loaderId = p.frame.loaderId;
      this.committed.add(this.loaderId);
      this.world = undefined;
    },
    'Page.navigatedWithinDocument': (p) => {
      if (p.frameId === this.mainFrameId) this.url = p.url;
    },
    'Page.lifecycleEvent': (p) => {
      if (p.frameId !== this.mainFrameId) return;
      const seen = this.lifecycle.get(p.loaderId) ?? new Set<string>();
      if (p.name === 'init') seen.clear();
      seen.add(p.name);
      this.lifecycle.set(p.loaderId, seen);
    },
    // A form submitted is a navigation asked for before it starts: it is in flight from then.
    'Page.frameRequestedNavigation': (p) => this.loading(p.frameId, true),
    'Page.frameStartedNavigating': (p) => this.loading(p.frameId, true),
    'Page.frameStartedLoading': (p) => this.loading(p.frameId, true),
    'Page.frameStoppedLoading': (p) => this.loading(p.frameId, false),
    'Page.windowOpen': (p) => this.hooks.windowOpen(p.url),
    'Runtime.executionContextDestroyed': (p) => {
      if (p.executionContextId === this.worldId) this.world = undefined;
    },
    'Runtime.executionContextsCleared': () => {
      this.world = undefined;
    },
    'Runtime.consoleAPICalled': (p) => {
      if (p.type === 'error') this.consoleError(p.args.map(argText).join(' '));
    },
    'Runtime.exceptionThrown': (p) => this.consoleError(exceptionText(p.exceptionDetails)),
    'Log.entryAdded': (p) => {
      if (p.entry.level === 'error') this.consoleError(p.entry.text);
    },
    // The main document's HTTP status (step evidence.navigations): triage reads error pages by it.
    'Network.requestWillBeSent': (p) => {
      if (p.type === 'Document' && p.frameId === this.mainFrameId && this.navigations.size < MAX_NAVIGATIONS)
        this.navigations.set(p.requestId, { url: p.request.url.replace(/[?#].*$/s, '').slice(0, 2000) });
    },
    'Network.responseReceived': (p) => {
      const nav = this.navigations.get(p.requestId);
      if (!nav) return;
      nav.status = p.response.status;
      if (p.response.statusText) nav.statusText = p.response.statusText.slice(0, 200);
    },
    'Network.loadingFailed': (p) => {
      const nav = this.navigations.get(p.requestId);
      if (nav && nav.status === undefined) nav.error = p.errorText.slice(0, 500);
    },
  };

  private loading(frameId: string, loading: boolean): void {
    if (frameId === this.mainFrameId) this.mainLoading = loading;
  }

  private event(method: string, params: unknown): void {
    (this.handlers[method as EventName] as ((p: unknown) => void) | undefined)?.(params);
    if (method !== 'Fetch.requestPaused') this.wake();
  }

  private consoleError(text: string): void {
    if (this.errors.length < MAX_CONSOLE_ERRORS) this.errors.push(text.slice(0, MAX_ERROR_CHARS));
  }

  /** The main document's navigations since the last call, in order. */
  takeNavigations(): Array<{ url: string; status?: number; statusText?: string; error?: string }> {
    const navigations = [...this.navigations.values()];
    this.navigations = new Map();
    return navigations;
  }

  /** The console errors and uncaught errors since the last call. */
  takeConsoleErrors(): string[] {
    const errors = this.errors;
    this.errors = [];
    return errors;
  }

  send<M extends keyof Commands>(method: M, ...params: Commands[M]['paramsType']): Promise<Commands[M]['returnType']> {
    if (this.gone) return Promise.reject(new PageGone(this.gone));
    return this.cdp.send(method, ...params).catch((err) => {
      throw this.gone ? new PageGone(this.gone) : err;
    });
  }

  /** The isolated world of the main frame's document, with the engine in it. */
  private isolatedWorld(): Promise<number> {
    this.world ??= (async () => {
      const { executionContextId } = await this.send('Page.createIsolatedWorld', {
        frameId: this.mainFrameId,
        worldName: WORLD,
        grantUniveralAccess: false,
      });
      const installed = await this.send('Runtime.evaluate', {
        expression: engineSource,
        contextId: executionContextId,
      });
      if (installed.exceptionDetails)
        throw new Error(`the page engine did not start: ${exceptionText(installed.exceptionDetails)}`);
      this.worldId = executionContextId;
      return executionContextId as number;
    })();
    const world = this.world;
    world.catch(() => this.world === world && (this.world = undefined));
    return world;
  }

  /** Calls the page engine (src/page/engine.ts) in the main frame's isolated world; answers by value. */
  async engine<K extends keyof PageEngine>(
    name: K,
    ...args: Parameters<PageEngine[K]>
  ): Promise<Awaited<ReturnType<PageEngine[K]>>> {
    for (let attempt = 0; ; attempt++) {
      try {
        const contextId = await this.isolatedWorld();
        const reply = await this.send('Runtime.evaluate', {
          expression: `globalThis.__otpEngine.${name}(...${JSON.stringify(args)})`,
          contextId,
          returnByValue: true,
          awaitPromise: true,
        });
        if (reply.exceptionDetails)
          throw new EngineError(exceptionText(reply.exceptionDetails).replace(/^Error: /, ''));
        return reply.result.value;
      } catch (err) {
        // The document went away under the call (a navigation): once more in the new one.
        if (err instanceof PageGone || err instanceof EngineError || attempt >= 3 || !contextLost(err)) throw err;
        this.world = undefined;
      }
    }
  }

  /** Evaluates a script in the page's own world (eval steps), as a page script would. */
  async evaluate(script: string): Promise<unknown> {
    const reply = await this.send('Runtime.evaluate', {
      expression: script,
      returnByValue: true,
      awaitPromise: true,
      userGesture: true,
    });
    if (reply.exceptionDetails) throw new EngineError(exceptionText(reply.exceptionDetails));
    return reply.result.value;
  }

  /** Navigates the main frame and waits for its waitUntil event; errorText of a failed navigation is thrown. */
  async navigate(url: string, waitUntil: string, timeoutMs: number): Promise<void> {
    const reply = await this.send('Page.navigate', { url });
    if (reply.errorText) throw new NavigationFailed(reply.errorText);
    const loaderId = reply.loaderId as string | undefined;
    if (!loaderId || waitUntil === 'commit') return;
    const event =
      { load: 'load', domcontentloaded: 'DOMContentLoaded', networkidle: 'networkIdle' }[waitUntil] ?? 'load';
    // Once it committed, the event of the main frame's current document: a page that sends itself
    // elsewhere as it loads is waited for where it went (as Playwright's goto does).
    const reached = () => this.committed.has(loaderId) && Boolean(this.lifecycle.get(this.loaderId)?.has(event));
    await this.waitFor(reached, timeoutMs, `navigation to ${url}`);
  }

  /** Network idle (no request for 500 ms) after the current document's load. */
  async networkIdle(timeoutMs: number): Promise<void> {
    await this.waitFor(() => Boolean(this.lifecycle.get(this.loaderId)?.has('networkIdle')), timeoutMs, 'network idle');
  }

  /**
   * Waits (at most ms) until the main frame is not loading. One round trip to the page first: what
   * the page did before it (an error thrown after a click's handler, a navigation it asked for) has
   * been told by then, since the debugger's events and replies come in order.
   */
  async settled(ms: number, more: () => boolean = () => true): Promise<void> {
    await this.send('Runtime.evaluate', { expression: '0' }).catch(() => undefined);
    if (ms <= 0) return;
    await this.waitFor(() => !this.mainLoading && more(), ms, 'settle').catch(() => undefined);
  }

  async screenshot(fullPage: boolean): Promise<string> {
    if (!fullPage) return (await this.send('Page.captureScreenshot', { format: 'png' })).data;
    const metrics = await this.send('Page.getLayoutMetrics');
    const { width, height } = metrics.cssContentSize;
    return (
      await this.send('Page.captureScreenshot', {
        format: 'png',
        captureBeyondViewport: true,
        clip: { x: 0, y: 0, width: Math.ceil(width), height: Math.ceil(height), scale: 1 },
      })
    ).data;
  }

  /** Detaches the debugger and closes the run's window. */
  async close(): Promise<void> {
    this.gone ??= 'the run is over';
    this.wake();
    await this.cdp.detach();
    await chrome.windows.remove(this.windowId).catch(() => undefined);
  }
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** The page engine threw: an element that cannot do what was asked (not a select, not a checkbox). */
export class EngineError extends Error {}

export class NavigationFailed extends Error {}

function contextLost(err: unknown): boolean {
  return /context|Target closed|Inspected target navigated/i.test(String((err as Error)?.message ?? err));
}

function argText(arg: Protocol.Runtime.RemoteObject): string {
  if (arg.value !== undefined) return typeof arg.value === 'string' ? arg.value : JSON.stringify(arg.value);
  return String(arg.unserializableValue ?? arg.description ?? '');
}

/** An uncaught error as otp-runner reports it: `Name: message`. */
function exceptionText(details: Protocol.Runtime.ExceptionDetails): string {
  const description: string | undefined = details.exception?.description;
  const text = description ? firstLine(description) : details.text;
  return String(text ?? 'unknown error').replace(/^Uncaught /, '');
}
