// How a step ends when it does not pass: an OTP error code, the step status it maps to, and what the
// step.result carries with it (actual, usedLocator, triedLocators). docs/runner.md lists the codes.

import type { OtpErrorCode } from '../otp/protocol/codes.js';
import type { Locator, TriedLocator } from '../otp/protocol/schemas/locator.js';
import { statusOf } from '../otp/protocol/step-rules.js';

export { statusOf };

type Codes = typeof OtpErrorCode;
/** The codes a step the runner performs can end with: those of the protocol's list that belong to a step. */
export type StepCode = Codes[
  | 'locatorNotFound'
  | 'assertFailed'
  | 'timeout'
  | 'navigationBlocked'
  | 'capability'
  | 'cancelled'
  | 'internal'];

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
