// A step's step.result as every executor builds it (otp-runner and the browser extension): its status
// from its code (statusOf), and what it carries with it (actual, usedLocator, triedLocators), each
// bounded as the protocol's schema bounds it. Evidence is each executor's own.
import type { Locator, TriedLocator } from './schemas/locator.js';
import type { StepResultPayload } from './schemas/messages.js';
import { type StepCode, statusOf } from './step-rules.js';

/** What a step found: the text it observed, the locator that matched, the candidates tried before it. */
export interface StepObservation {
  actual?: string;
  usedLocator?: Locator;
  triedLocators?: TriedLocator[];
}

/** How a step ends when it does not pass: its code and what it observed on the way. */
export class StepError extends Error {
  constructor(
    readonly code: StepCode,
    message: string,
    readonly extra: StepObservation = {},
  ) {
    super(message);
  }
}

/** The step.result of a step that took `durationMs`: passed with `outcome`, or ended by `failure`. */
export function stepResult(
  stepIndex: number,
  durationMs: number,
  outcome: StepObservation,
  failure: StepError | undefined,
): StepResultPayload {
  const status = failure ? statusOf(failure.code) : 'pass';
  const result: StepResultPayload = { stepIndex, status, durationMs };
  const usedLocator = outcome.usedLocator ?? failure?.extra.usedLocator;
  const actual = outcome.actual ?? failure?.extra.actual;
  if (failure) {
    const tried = failure.extra.triedLocators;
    result.error = {
      code: failure.code,
      message: failure.message,
      ...(tried?.length ? { triedLocators: tried.slice(0, 100) } : {}),
    };
  }
  if (actual !== undefined) result.actual = actual.slice(0, 100_000);
  if (usedLocator) result.usedLocator = usedLocator;
  if (!failure && outcome.triedLocators) result.triedLocators = outcome.triedLocators.slice(0, 100);
  return result;
}
