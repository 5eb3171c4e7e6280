// run.start.allowedOrigins in the run's window, on two lines (docs/extension.md "allowedOrigins"):
// - the debugger's Fetch domain on the run's tab pauses every request (each redirect hop too) and
//   fails those to another origin before anything is sent (net::ERR_BLOCKED_BY_CLIENT);
// - declarativeNetRequest session rules: every request of the run's tabs (WebSockets too, which Fetch
//   does not see) to another origin is blocked, and so is a first navigation initiated from the
//   run's origins in a tab nobody knows yet (a popup, before it is known to be the run's); the
//   user's tabs are excluded by id.
// A refused navigation of a main frame (the run's page or a popup) fails its step with
// E_NAVIGATION_BLOCKED; refused sub-resources are aborted quietly, as otp-runner does.

import type { Protocol } from 'devtools-protocol';
import { allowedOriginSet, originOf, urlAllowed } from '../../../src/otp/protocol/origins.js';
import { originPattern } from './origin-patterns.js';
import type { RunPage } from './page.js';

const ALL_TYPES = [
  'main_frame',
  'sub_frame',
  'stylesheet',
  'script',
  'image',
  'font',
  'object',
  'xmlhttprequest',
  'ping',
  'csp_report',
  'media',
  'websocket',
  'webtransport',
  'webbundle',
  'other',
] as chrome.declarativeNetRequest.ResourceType[];

const guards = new Set<RunGuard>();
/** Tabs that are no run's (the user's): excluded from the rule for unknown tabs. */
const userTabs = new Set<number>();
let ruleSync = Promise.resolve();

export class RunGuard {
  private readonly origins: Set<string>;
  readonly tabs = new Set<number>();
  private blocked: string[] = [];
  /** Popups opened (Page.windowOpen) and not yet answered (committed, failed). */
  private popupsAwaited = 0;
  private readonly popupsLoading = new Set<number>();
  private readonly id: number;
  private static nextId = 1;

  constructor(readonly allowedOrigins: readonly string[]) {
    this.origins = allowedOriginSet(allowedOrigins);
    this.id = RunGuard.nextId++;
  }

  allows(url: string): boolean {
    return urlAllowed(this.origins, url);
  }

  /** The run's page is this tab: its requests are judged from now on. */
  async watch(tabId: number): Promise<void> {
    guards.add(this);
    this.tabs.add(tabId);
    await Promise.all([syncRules(), syncPrediction()]);
  }

  async close(): Promise<void> {
    guards.delete(this);
    await Promise.all([syncRules(), syncPrediction()]);
  }

  /** Fetch.requestPaused of the run's page: continued, or failed before anything is sent. */
  requestPaused(page: RunPage, params: Protocol.Fetch.RequestPausedEvent): void {
    const url: string = params.request.url;
    if (this.allows(url)) {
      page.cdp.send('Fetch.continueRequest', { requestId: params.requestId }).catch(() => undefined);
      return;
    }
    if (params.resourceType === 'Document' && params.frameId === page.mainFrameId) this.refused(url);
    page.cdp
      .send('Fetch.failRequest', { requestId: params.requestId, errorReason: 'BlockedByClient' })
      .catch(() => undefined);
  }

  private refused(url: string): void {
    if (!this.blocked.includes(url)) this.blocked.push(url);
  }

  /** The page opens a window: a URL off the list is refused there by the rules (the popup's first request). */
  windowOpen(url: string): void {
    this.popupsAwaited++;
    if (url && !this.allows(url)) this.refused(url);
  }

  popupCreated(tabId: number): void {
    this.tabs.add(tabId);
    this.popupsLoading.add(tabId);
    this.popupsAwaited = Math.max(0, this.popupsAwaited - 1);
    void syncRules();
  }

  popupAnswered(tabId: number): void {
    this.popupsLoading.delete(tabId);
  }

  /** A main-frame request of one of the run's tabs failed: refused by a rule. */
  requestFailed(details: { tabId: number; url: string; error: string; type: string }): void {
    if (details.type === 'main_frame' && /ERR_BLOCKED_BY_CLIENT/.test(details.error)) this.refused(details.url);
  }

  /** No popup opened and not yet answered. */
  popupsSettled(): boolean {
    return this.popupsAwaited === 0 && this.popupsLoading.size === 0;
  }

  /** Main-frame navigations refused since the last call. */
  take(): string[] {
    const blocked = this.blocked;
    this.blocked = [];
    return blocked;
  }

  rules(base: number): chrome.declarativeNetRequest.Rule[] {
    const patterns = this.allowedOrigins.map(originPattern).filter((p): p is string => Boolean(p));
    const tabIds = [...this.tabs];
    const allow = (regexFilter: string, i: number, condition: object) => ({
      id: base + 10 + i,
      priority: 3,
      action: { type: 'allow' as chrome.declarativeNetRequest.RuleActionType },
      condition: { regexFilter, resourceTypes: ALL_TYPES, ...condition },
    });
    const rules: chrome.declarativeNetRequest.Rule[] = [
      ...patterns.map((p, i) => allow(p, i, { tabIds })),
      {
        id: base + 1,
        priority: 2,
        action: { type: 'block' as chrome.declarativeNetRequest.RuleActionType },
        condition: { tabIds, resourceTypes: ALL_TYPES },
      },
    ];
    // A popup's first navigation can come before its tab is known: any unknown tab's navigation
    // initiated from the run's hosts is judged by the run's list.
    const hosts = [...new Set([...this.origins].map((o) => originOf(o)!.host.replace(/^\[|\]$/g, '')))];
    if (hosts.length) {
      const excludedTabIds = [...userTabs, ...[...guards].flatMap((g) => [...g.tabs])];
      const unknown = {
        excludedTabIds,
        initiatorDomains: hosts,
        resourceTypes: ['main_frame'] as chrome.declarativeNetRequest.ResourceType[],
      };
      rules.push(
        ...patterns.map((p, i) => ({
          ...allow(p, i, {}),
          id: base + 50 + i,
          condition: { regexFilter: p, ...unknown },
        })),
      );
      rules.push({
        id: base + 2,
        priority: 2,
        action: { type: 'block' as chrome.declarativeNetRequest.RuleActionType },
        condition: unknown,
      });
    }
    return rules;
  }

  get ruleBase(): number {
    return this.id * 100;
  }
}

/** The guard of the run a tab belongs to. */
export function guardOfTab(tabId: number): RunGuard | undefined {
  for (const guard of guards) if (guard.tabs.has(tabId)) return guard;
  return undefined;
}

/** A tab was created: a popup of a run's tab is the run's; any other is the user's. */
export function tabCreated(tab: chrome.tabs.Tab): void {
  if (tab.id === undefined) return;
  const guard = tab.openerTabId !== undefined ? guardOfTab(tab.openerTabId) : undefined;
  if (guard) guard.popupCreated(tab.id);
  else {
    userTabs.add(tab.id);
    void syncRules();
  }
}

export async function knowUserTabs(): Promise<void> {
  for (const tab of await chrome.tabs.query({})) if (tab.id !== undefined && !guardOfTab(tab.id)) userTabs.add(tab.id);
}

export function tabRemoved(tabId: number): void {
  userTabs.delete(tabId);
  guardOfTab(tabId)?.popupAnswered(tabId);
}

/** Replaces the session rules with those of the runs in flight, one update at a time. */
export function syncRules(): Promise<void> {
  ruleSync = ruleSync
    .catch(() => undefined)
    .then(async () => {
      const existing = await chrome.declarativeNetRequest.getSessionRules();
      const addRules = [...guards].flatMap((g) => g.rules(g.ruleBase));
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: existing.map((r) => r.id), addRules });
    });
  return ruleSync.catch((err) => console.error('allowedOrigins rules not set', err));
}

/**
 * While a run is in flight, the browser's network prediction is off: with it on, Chromium opens
 * connections to a page's navigation target as the navigation starts (its loading predictor), before
 * any request a rule or the debugger can refuse, so a forbidden origin would see a connection. Given
 * back to the user's setting when no run is left (docs/extension.md, "allowedOrigins").
 */
async function syncPrediction(): Promise<void> {
  const setting = chrome.privacy?.network?.networkPredictionEnabled;
  if (!setting) return;
  await (guards.size ? setting.set({ value: false, scope: 'regular' }) : setting.clear({ scope: 'regular' })).catch(
    (err) => console.error('network prediction not set', err),
  );
}
