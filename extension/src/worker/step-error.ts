// How a step ends when it does not pass: its code (whose status is the protocol's rule, statusOf) and
// what its result carries with it (actual, usedLocator, triedLocators), as otp-runner reports them.
import type { Locator, TriedLocator } from '../../../src/otp/protocol/schemas/locator.js';
import type { StepCode } from '../../../src/otp/protocol/step-rules.js';

export class StepError extends Error {
  constructor(
    readonly code: StepCode,
    message: string,
    readonly extra: { actual?: string; usedLocator?: Locator; triedLocators?: TriedLocator[] } = {},
  ) {
    super(message);
  }
}

export function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

/** The time a step has left: every wait of a step gets what remains, so no step outlives its timeoutMs. */
export class Deadline {
  readonly at: number;
  constructor(
    ms: number,
    readonly started = Date.now(),
  ) {
    this.at = started + ms;
  }
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  elapsed(): number {
    return Date.now() - this.started;
  }
}
