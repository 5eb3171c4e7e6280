// OTP locators (docs/protocol.md, Locators) as Playwright locators, and `candidates` tried in order.
// Order of scoping: `frame` (from the page), then `within` (searched inside that frame), then the
// strategy; `nth` picks among the matches (without nth the first match is used).
import type { FrameLocator, Page, Locator as PwLocator } from 'playwright-core';

type AriaRole = Parameters<Page['getByRole']>[0];

import type { Locator, LocatorOrCandidates, TriedLocator } from '../otp/protocol/schemas/locator.js';
import { describeLocator } from '../otp/protocol/step-rules.js';
import type { Deadline } from './deadline.js';
import { StepError } from './step-error.js';

type Scope = Page | PwLocator | FrameLocator;

/** Every element the locator matches (nth not applied). */
export function buildLocator(root: Scope, loc: Locator): PwLocator {
  let scope: Scope = root;
  if (loc.frame) scope = scope.frameLocator(loc.frame);
  if (loc.within) scope = buildLocator(scope, loc.within).nth(loc.within.nth ?? 0);
  const exact = loc.exact;
  switch (loc.by) {
    case 'testid':
      return scope.getByTestId(loc.value);
    case 'role':
      return scope.getByRole(loc.value as AriaRole, {
        ...(loc.name !== undefined ? { name: loc.name } : {}),
        ...(exact !== undefined ? { exact } : {}),
      });
    case 'label':
      return scope.getByLabel(loc.value, { exact });
    case 'placeholder':
      return scope.getByPlaceholder(loc.value, { exact });
    case 'text':
      return scope.getByText(loc.value, { exact });
    case 'alt':
      return scope.getByAltText(loc.value, { exact });
    case 'title':
      return scope.getByTitle(loc.value, { exact });
    case 'css':
      return scope.locator(`css=${loc.value}`);
    case 'xpath':
      return scope.locator(`xpath=${loc.value}`);
  }
}

export function candidatesOf(spec: LocatorOrCandidates): Locator[] {
  return 'candidates' in spec ? spec.candidates : [spec];
}

export interface Resolved {
  /** The element acted on (nth applied). */
  target: PwLocator;
  /** Every element the used locator matches (for count). */
  all: PwLocator;
  used: Locator;
  tried: TriedLocator[];
  /** Whether the used locator matched (currentLocator falls back to the first candidate when none did). */
  matched: boolean;
}

/** One pass over the candidates, in order: the first that matches more than nth elements wins. */
async function firstMatch(page: Page, candidates: Locator[]): Promise<{ found?: Resolved; tried: TriedLocator[] }> {
  const tried: TriedLocator[] = [];
  for (const loc of candidates) {
    const all = buildLocator(page, loc);
    const count = await all.count();
    // A later candidate's one match: whether it can be acted on, so that the service proposes only a
    // locator that finds one visible, enabled element (GET /ai/healing). Not asked of the first
    // candidate: a step that finds its element first time (nearly every step) proposes nothing, and
    // two more round trips to the browser cost every such step milliseconds.
    tried.push(
      count === 1 && tried.length > 0
        ? { ...loc, count, visible: await all.isVisible(), enabled: await all.isEnabled() }
        : { ...loc, count },
    );
    if (count > (loc.nth ?? 0))
      return { found: { target: all.nth(loc.nth ?? 0), all, used: loc, tried, matched: true }, tried };
  }
  return { tried };
}

/**
 * The element a step acts on: the first candidate that matches, waiting (until the step's deadline)
 * for one to appear. None by then: E_LOCATOR_NOT_FOUND with every candidate and its count.
 */
export async function resolveLocator(page: Page, spec: LocatorOrCandidates, deadline: Deadline): Promise<Resolved> {
  const candidates = candidatesOf(spec);
  // One waiter for "any candidate is attached", rather than one per candidate left running.
  const anyAttached = candidates.map((c) => buildLocator(page, c).nth(c.nth ?? 0)).reduce((a, b) => a.or(b));
  for (;;) {
    const { found, tried } = await firstMatch(page, candidates);
    if (found) return found;
    const remaining = deadline.remaining();
    if (remaining <= 0) throw notFound(tried);
    try {
      await anyAttached.first().waitFor({ state: 'attached', timeout: remaining });
    } catch {
      // Timed out (or the page went away): one last look, then not found.
      const last = await firstMatch(page, candidates).catch(() => ({ found: undefined, tried }));
      if (last.found) return last.found;
      throw notFound(last.tried);
    }
  }
}

/** Like resolveLocator without waiting: the first candidate that matches now, else the first one. */
export async function currentLocator(page: Page, spec: LocatorOrCandidates): Promise<Resolved> {
  const candidates = candidatesOf(spec);
  const { found, tried } = await firstMatch(page, candidates);
  if (found) return found;
  const first = candidates[0]!;
  const all = buildLocator(page, first);
  return { target: all.nth(first.nth ?? 0), all, used: first, tried, matched: false };
}

/**
 * A single locator (no candidates) needs no look before acting: Playwright's own auto-wait finds the
 * element, as a bare script would. Only when the action fails is the locator counted, to tell
 * E_LOCATOR_NOT_FOUND from E_TIMEOUT (see counted).
 */
export function singleLocator(page: Page, spec: LocatorOrCandidates): Resolved | undefined {
  if ('candidates' in spec) return undefined;
  const all = buildLocator(page, spec);
  return { target: all.nth(spec.nth ?? 0), all, used: spec, tried: [], matched: true };
}

/** After an action on a single locator failed: E_LOCATOR_NOT_FOUND (with its count) when it matched nothing. */
export async function counted(resolved: Resolved): Promise<{ found: boolean; tried: TriedLocator[] }> {
  const count = await resolved.all.count().catch(() => 0);
  return { found: count > (resolved.used.nth ?? 0), tried: [{ ...resolved.used, count }] };
}

export function notFound(tried: TriedLocator[]): StepError {
  const what = tried.map((t) => describe(t)).join(', ');
  return new StepError('E_LOCATOR_NOT_FOUND', `no element matched ${what}`, { triedLocators: tried });
}

/** A locator in a line of text: role "button" name "Save" nth 1 in iframe#app. */
export const describe = describeLocator;
