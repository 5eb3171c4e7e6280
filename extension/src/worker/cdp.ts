// chrome.debugger for one tab, typed by the protocol's own definitions (devtools-protocol): commands,
// and its events handed to whoever listens for that tab. The listeners are added once, at the top of
// the worker (main.ts), so that an event wakes a stopped worker.
import type { ProtocolMapping } from 'devtools-protocol/types/protocol-mapping.js';

export type Commands = ProtocolMapping.Commands;
export type Events = ProtocolMapping.Events;
export type EventName = keyof Events;
export type EventParams<E extends EventName> = Events[E][0];

type Listener = (method: string, params: unknown) => void;
type DetachListener = (reason: string) => void;

const listeners = new Map<number, Listener>();
const detachListeners = new Map<number, DetachListener>();
/**
 * Events of a tab nobody listens to yet: a restarted worker is woken by an event of a run's tab
 * (a request paused by the run's Fetch guard) before it has taken the run up again. Kept, and handed
 * to the run's page when it listens (a paused request must be answered, or the page waits forever).
 */
const unheard = new Map<number, Array<[string, unknown]>>();
const MAX_UNHEARD = 200;

/** Routes chrome.debugger's events to the tab's listener (called once, in main.ts). */
export function routeDebuggerEvents(): void {
  chrome.debugger.onEvent.addListener((source, method, params) => {
    if (source.tabId === undefined || source.sessionId) return;
    const listener = listeners.get(source.tabId);
    if (listener) return listener(method, params ?? {});
    const kept = unheard.get(source.tabId) ?? [];
    if (kept.length < MAX_UNHEARD) kept.push([method, params ?? {}]);
    unheard.set(source.tabId, kept);
  });
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (source.tabId !== undefined) debuggerDetached(source.tabId, reason);
  });
}

/**
 * chrome.debugger.onDetach for a tab: `target_closed` (the tab closed), `canceled_by_user` (the user
 * pressed Cancel on the debugger bar). Exported for the tests, which cannot press that bar headless.
 */
export function debuggerDetached(tabId: number, reason: string): void {
  detachListeners.get(tabId)?.(reason);
}

export class Cdp {
  private readonly target: chrome.debugger.Debuggee;

  constructor(
    readonly tabId: number,
    onEvent: Listener,
    onDetach: DetachListener,
  ) {
    this.target = { tabId };
    listeners.set(tabId, onEvent);
    detachListeners.set(tabId, onDetach);
  }

  /** Hands over the events that came before anyone listened to this tab (see `unheard`). */
  replayUnheard(): void {
    const kept = unheard.get(this.tabId) ?? [];
    unheard.delete(this.tabId);
    for (const [method, params] of kept) listeners.get(this.tabId)?.(method, params);
  }

  /** Attaches (protocol 1.3); a session this extension still holds (a restarted worker) is taken over. */
  async attach(): Promise<void> {
    try {
      await chrome.debugger.attach(this.target, '1.3');
    } catch (err) {
      if (!/already attached/i.test(String((err as Error).message))) throw err;
    }
  }

  send<M extends keyof Commands>(method: M, ...params: Commands[M]['paramsType']): Promise<Commands[M]['returnType']> {
    return chrome.debugger.sendCommand(
      this.target,
      method,
      params[0] as { [key: string]: unknown } | undefined,
    ) as Promise<Commands[M]['returnType']>;
  }

  async detach(): Promise<void> {
    listeners.delete(this.tabId);
    detachListeners.delete(this.tabId);
    await chrome.debugger.detach(this.target).catch(() => undefined);
  }
}
