// What a step's outcome means, the same for every executor (otp-runner and the browser extension
// follow it; docs/protocol.md "What a step result holds"): which status each step code is, how an
// assert compares what it observed with what it expected, the word `actual` holds for a state kind,
// and how a locator is named in a message.
import type { Locator } from './schemas/locator.js';

/** The codes a step an executor performs can end with. */
export type StepCode =
  | 'E_LOCATOR_NOT_FOUND'
  | 'E_ASSERT_FAILED'
  | 'E_TIMEOUT'
  | 'E_NAVIGATION_BLOCKED'
  | 'E_CAPABILITY'
  | 'E_CANCELLED'
  | 'E_INTERNAL';

/** fail: the check did not hold; error: the step could not be performed; skip: not performed. */
export function statusOf(code: StepCode): 'fail' | 'error' | 'skip' {
  switch (code) {
    case 'E_LOCATOR_NOT_FOUND':
    case 'E_ASSERT_FAILED':
    case 'E_NAVIGATION_BLOCKED':
      return 'fail';
    case 'E_CAPABILITY':
    case 'E_CANCELLED':
      return 'skip';
    default:
      return 'error';
  }
}

/** Assert kinds that need an element to observe: without one they end E_LOCATOR_NOT_FOUND, not E_ASSERT_FAILED. */
export const NEEDS_ELEMENT: ReadonlySet<string> = new Set([
  'enabled',
  'disabled',
  'checked',
  'text',
  'value',
  'attribute',
]);

/** The word `actual` holds when a state kind holds (the other word: hidden/visible, disabled/enabled, unchecked). */
export const STATE_WORD: Readonly<Record<string, string>> = {
  visible: 'visible',
  hidden: 'hidden',
  enabled: 'enabled',
  disabled: 'disabled',
  checked: 'checked',
};

/** Pauses between an assert's observations, as Playwright's own expect polls. */
export const ASSERT_POLL_MS: readonly number[] = [0, 50, 100, 250, 500];

/** Text as a reader sees it: runs of white space as one space, trimmed. */
export function normaliseSpace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Whether the observation holds; a string says why the comparison itself is impossible. */
export function holds(kind: string, op: string, actual: string, expected: string | undefined): boolean | string {
  if (kind in STATE_WORD) return actual === STATE_WORD[kind];
  const want = expected ?? '';
  switch (op) {
    case 'equals':
      return kind === 'count' ? Number(actual) === Number(want) : actual === want;
    case 'contains':
      return actual.includes(want);
    case 'matches':
      try {
        return new RegExp(want).test(actual);
      } catch (err) {
        return `expected is not a valid regular expression: ${firstLine(err)}`;
      }
    case 'gt':
    case 'lt': {
      const n = Number(want);
      if (want.trim() === '' || Number.isNaN(n)) return `expected must be a number for ${op}, got "${want}"`;
      return op === 'gt' ? Number(actual) > n : Number(actual) < n;
    }
  }
  return `unknown op ${op}`;
}

/** The first line of an error's message, at most 2000 characters. */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 2000);
}

/** A locator in a line of text: role "button" name "Save" nth 1 in iframe#app. */
export function describeLocator(loc: Locator): string {
  const parts = [`${loc.by} "${loc.value}"`];
  if (loc.name !== undefined) parts.push(`name "${loc.name}"`);
  if (loc.nth !== undefined) parts.push(`nth ${loc.nth}`);
  if (loc.within) parts.push(`within ${describeLocator(loc.within)}`);
  if (loc.frame) parts.push(`in ${loc.frame}`);
  return parts.join(' ');
}
