// Locators and candidates as otp-runner resolves them (docs/protocol.md "What a step result holds"):
// a single locator is not looked at before acting (the action waits for its element, and only when it
// fails is the locator counted, to tell E_LOCATOR_NOT_FOUND from E_TIMEOUT); candidates are tried in
// order, each reported with its match count, a later one with one match also with visible and enabled.
import type { Locator, LocatorOrCandidates, TriedLocator } from '../../../src/otp/protocol/schemas/locator.js';
import { describeLocator } from '../../../src/otp/protocol/step-rules.js';
import type { Probe } from '../page/engine.js';
import type { RunPage } from './page.js';
import { type Deadline, StepError } from './step-error.js';

export interface Resolved {
  used: Locator;
  tried: TriedLocator[];
  /** Whether the used locator matched (current() falls back to the first candidate when none did). */
  matched: boolean;
  /** A single locator, not looked at yet. */
  single: boolean;
}

export function candidatesOf(spec: LocatorOrCandidates): Locator[] {
  return 'candidates' in spec ? spec.candidates : [spec];
}

export function singleLocator(spec: LocatorOrCandidates): Resolved | undefined {
  return 'candidates' in spec ? undefined : { used: spec, tried: [], matched: true, single: true };
}

const triedOf = (candidates: Locator[], probes: Probe[]): TriedLocator[] =>
  probes.map((p, i) => ({ ...candidates[i]!, ...p }));

export function notFound(tried: TriedLocator[]): StepError {
  const what = tried.map((t) => describeLocator(t)).join(', ');
  return new StepError('E_LOCATOR_NOT_FOUND', `no element matched ${what}`, { triedLocators: tried });
}

/** The first candidate that matches, waiting (until the deadline) for one; none: E_LOCATOR_NOT_FOUND. */
export async function resolveLocator(page: RunPage, spec: LocatorOrCandidates, deadline: Deadline): Promise<Resolved> {
  const candidates = candidatesOf(spec);
  const { index, tried } = await page.engine('resolve', candidates, deadline.remaining());
  if (index < 0) throw notFound(triedOf(candidates, tried));
  return { used: candidates[index]!, tried: triedOf(candidates, tried), matched: true, single: false };
}

/** Like resolveLocator without waiting: the first candidate that matches now, else the first one. */
export async function currentLocator(page: RunPage, spec: LocatorOrCandidates): Promise<Resolved> {
  const candidates = candidatesOf(spec);
  const { index, tried } = await page.engine('firstMatch', candidates);
  const found = index >= 0;
  return { used: candidates[found ? index : 0]!, tried: triedOf(candidates, tried), matched: found, single: false };
}

/** After an action on a single locator failed: whether it matched (beyond its nth), with its count. */
export async function counted(page: RunPage, loc: Locator): Promise<{ found: boolean; tried: TriedLocator[] }> {
  const { count } = await page.engine('probe', loc).catch(() => ({ count: 0 }));
  return { found: count > (loc.nth ?? 0), tried: [{ ...loc, count }] };
}

/** The candidates tried by a step that passed through another than its first (for healing proposals). */
export function healedTries(resolved: Resolved | undefined): { triedLocators?: TriedLocator[] } {
  return resolved && resolved.tried.length > 1 ? { triedLocators: resolved.tried } : {};
}
