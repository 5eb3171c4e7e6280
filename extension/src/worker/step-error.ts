// How a step ends when it does not pass: its code (whose status is the protocol's rule, statusOf) and
// what its result carries with it (actual, usedLocator, triedLocators), as otp-runner reports them.
import { StepError } from '../../../src/otp/protocol/step-result.js';

export { StepError };

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
