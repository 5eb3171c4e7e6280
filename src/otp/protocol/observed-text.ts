// Text an executor observed on the page under test is data, not protocol: an assert's `actual`, an
// error's message, the console errors. A page can hold NUL characters and lone UTF-16 surrogates,
// which PostgreSQL cannot store (validation/text.ts), and an executor that cuts long text to a limit
// can split a surrogate pair. In these fields such characters become U+FFFD and the step says so
// (`textReplaced`): the verdict stands. Everything else in a frame (identifiers, locators, codes) is
// the protocol's and is still refused. The service cleans a step.result as it arrives; otp-runner
// cleans its own before sending (and says so the same way).

import { OBSERVED_TEXT_FIELDS, type ObservedTextField } from '../../../machines/types.js';
import type { StepResultPayload } from './schemas/messages.js';

export { OBSERVED_TEXT_FIELDS, type ObservedTextField };

/** String.prototype.isWellFormed / toWellFormed (Node 20; the project's ES2022 lib does not declare them). */
type WellFormed = string & { isWellFormed(): boolean; toWellFormed(): string };

// A NUL or any surrogate, paired or not: one test per string, and only a string it matches is looked
// at closer (text without either, nearly all of it, costs that test alone).
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** `text` with every NUL and lone surrogate replaced by U+FFFD, or undefined when it has none. */
export function replacedText(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined;
  const hasNul = text.includes('\u0000');
  if (!hasNul && (text as WellFormed).isWellFormed()) return undefined;
  const wellFormed = (text as WellFormed).toWellFormed();
  return hasNul ? wellFormed.replaceAll('\u0000', '\ufffd') : wellFormed;
}

/**
 * Cleans the observed text of a step.result payload in place, and adds the fields it changed to
 * `payload.textReplaced` (in OBSERVED_TEXT_FIELDS order, with those the executor named itself).
 */
export function cleanObservedText(payload: StepResultPayload): void {
  const replaced = new Set<ObservedTextField>(payload.textReplaced);
  const before = replaced.size;
  if (payload.actual !== undefined) {
    const clean = replacedText(payload.actual);
    if (clean !== undefined) {
      payload.actual = clean;
      replaced.add('actual');
    }
  }
  if (payload.error) {
    const clean = replacedText(payload.error.message);
    if (clean !== undefined) {
      payload.error.message = clean;
      replaced.add('error.message');
    }
  }
  const consoleErrors = payload.evidence?.consoleErrors;
  if (consoleErrors) {
    for (let i = 0; i < consoleErrors.length; i++) {
      const clean = replacedText(consoleErrors[i]!);
      if (clean === undefined) continue;
      consoleErrors[i] = clean;
      replaced.add('evidence.consoleErrors');
    }
  }
  if (replaced.size > before) payload.textReplaced = OBSERVED_TEXT_FIELDS.filter((field) => replaced.has(field));
}
