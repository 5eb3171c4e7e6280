// Building outbound OTP frames: the envelope fields every frame carries, then the payload.
import { newMessageId } from '../../ids.js';

export const OTP_VERSION = '1.0';

export interface EnvelopeFields {
  sessionId?: string;
  runId?: string;
  ref?: string;
}

export function buildFrame(type: string, fields: EnvelopeFields, payload?: unknown): string {
  return JSON.stringify({
    otp: OTP_VERSION,
    id: newMessageId(),
    ts: new Date().toISOString(),
    type,
    ...fields,
    ...(payload === undefined ? {} : { payload }),
  });
}

export function errorFrame(
  code: string,
  message: string,
  fields: EnvelopeFields = {},
  details?: Record<string, unknown>,
): string {
  return buildFrame('error', fields, { code, message, ...(details ? { details } : {}) });
}

/** The major version of an `otp` field ("1.0" → "1"), or undefined when it is not a version string. */
export function majorVersion(otp: unknown): string | undefined {
  if (typeof otp !== 'string') return undefined;
  const match = /^(\d+)\.\d+$/.exec(otp);
  return match?.[1];
}
