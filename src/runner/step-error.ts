// How a step ends when it does not pass: an OTP error code, the step status it maps to, and what the
// step.result carries with it (actual, usedLocator, triedLocators). docs/runner.md lists the codes.
import type { Locator, TriedLocator } from '../otp/protocol/schemas/locator.js';

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

export class StepError extends Error {
  constructor(
    readonly code: StepCode,
    message: string,
    readonly extra: { actual?: string; usedLocator?: Locator; triedLocators?: TriedLocator[] } = {},
  ) {
    super(message);
  }
}

/** A Playwright TimeoutError (by name: playwright-core's errors class is not part of its typed API). */
export function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

/** The first line of an error's message, without Playwright's call log. */
export function shortMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 2000);
}
