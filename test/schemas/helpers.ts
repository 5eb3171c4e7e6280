// Helpers shared by the OTP schema specs: frame envelopes and assertions on field errors.
import { expect } from 'chai';
import type { Locator } from '../../src/otp/protocol/schemas/index.js';
import { validateStepAction, validatorFor } from '../../src/otp/protocol/validators.js';
import type { FieldError } from '../../src/validation/field-errors.js';

export const TS = '2024-05-01T12:00:00.000Z';
export const SESSION = 'ots_01hx7q9c2m3n4p5r6s7t8v9w0y';
export const RUN = 'otr_01hx7q9c2m3n4p5r6s7t8v9w0z';
let counter = 0;
export const msgId = (): string => `msg_t${++counter}`;

export function envelope(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { otp: '1.0', id: msgId(), ts: TS, type, ...extra };
}

export function errorsOf(result: { ok: true } | { ok: false; errors: FieldError[] }): FieldError[] {
  expect(result.ok, 'expected validation to fail').to.equal(false);
  return result.ok ? [] : result.errors;
}

export function expectValid(result: { ok: boolean; errors?: FieldError[] }, what = ''): void {
  expect(result.ok, `${what} should be valid: ${JSON.stringify(result.errors)}`).to.equal(true);
}

/** Exactly one error, on `field`, whose message contains `text`. */
export function expectOnly(
  result: { ok: true } | { ok: false; errors: FieldError[] },
  field: string,
  text: string,
): void {
  const errors = errorsOf(result);
  expect(errors, JSON.stringify(errors)).to.have.length(1);
  expect(errors[0]!.field).to.equal(field);
  expect(errors[0]!.message).to.contain(text);
}

/** Some error on `field` whose message contains `text`. */
export function expectError(
  result: { ok: true } | { ok: false; errors: FieldError[] },
  field: string,
  text: string,
): void {
  const errors = errorsOf(result);
  const hit = errors.find((e) => e.field === field && e.message.includes(text));
  expect(hit, `no error on ${field} containing "${text}" in ${JSON.stringify(errors)}`).to.not.equal(undefined);
}

/** A step action checked as the `otp` member of a test-case step. */
export const action = (a: unknown) => validateStepAction(a, 'otp');
export const css = (value: string): Locator => ({ by: 'css', value });
export const checkLocator = validatorFor<Locator>('LocatorOrCandidates');
