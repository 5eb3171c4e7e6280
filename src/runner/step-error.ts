// How a step ends when it does not pass (the protocol's StepError and statusOf, shared with the
// browser extension), and what the runner reads of Playwright's errors. docs/runner.md lists the codes.

export { StepError } from '../otp/protocol/step-result.js';
export { type StepCode, statusOf } from '../otp/protocol/step-rules.js';

/** A Playwright TimeoutError (by name: playwright-core's errors class is not part of its typed API). */
export function isTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

/** The first line of an error's message, without Playwright's call log. */
export function shortMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 2000);
}
