// Building outbound OTP frames: the envelope fields every frame carries, then the payload.
import { newMessageId } from '../../ids.js';
import { clip } from '../../validation/field-errors.js';
import { ID_PATTERNS } from './schemas/ids.js';

export const OTP_VERSION = '1.0';

export interface EnvelopeFields {
  sessionId?: string;
  runId?: string;
  ref?: string;
}

// Frames and trace entries come in bursts within one millisecond: the last ISO form is reused.
// Within the same second only the milliseconds change: the rest of the string is reused too (a
// run's trace turns 200 times into ISO strings at its finish, most of them in a few seconds).
let lastMs = NaN;
let lastIso = '';
let secondStart = NaN;
let secondPrefix = '';
/** `ms` (Date.now() or a time kept as a number) as an ISO 8601 UTC string. */
export function isoAt(ms: number): string {
  if (ms === lastMs) return lastIso;
  const within = ms - secondStart;
  if (within >= 0 && within < 1000 && Number.isInteger(within)) {
    lastIso = `${secondPrefix}${within < 10 ? '00' : within < 100 ? '0' : ''}${within}Z`;
  } else {
    lastIso = new Date(ms).toISOString();
    // "…T03:10:00." before the milliseconds and the Z (every ISO form ends ".mmmZ").
    secondPrefix = lastIso.slice(0, -4);
    secondStart = ms - Number(lastIso.slice(-4, -1));
  }
  lastMs = ms;
  return lastIso;
}

export function buildFrame(type: string, fields: EnvelopeFields, payload?: unknown): string {
  return JSON.stringify({
    otp: OTP_VERSION,
    id: newMessageId(),
    ts: isoAt(Date.now()),
    type,
    ...fields,
    ...(payload === undefined ? {} : { payload }),
  });
}

/**
 * The frames of one type and envelope (a run's step.exec frames): the same text as buildFrame, with
 * the envelope's fixed part serialised once. Each frame adds its id, time and payload (message ids
 * and ISO times need no escaping).
 */
export function frameTemplate(type: string, fields: EnvelopeFields): (payload: unknown) => string {
  const head = `{"otp":${JSON.stringify(OTP_VERSION)},"id":"`;
  const fixed = `",${JSON.stringify({ type, ...fields }).slice(1, -1)},"payload":`;
  return (payload) => `${head}${newMessageId()}","ts":"${isoAt(Date.now())}${fixed}${JSON.stringify(payload)}}`;
}

/** The longest message an error frame carries (messages may quote what the executor sent). */
const MAX_ERROR_MESSAGE = 4_000;
const MESSAGE_ID = new RegExp(ID_PATTERNS.message);

/**
 * An error frame, bounded in size whatever provoked it: the message is cut, and `ref` is kept only
 * when it is a message id (an executor's `id` of any length must not come back whole). The details
 * of an invalid frame are already capped (formatErrors).
 */
export function errorFrame(
  code: string,
  message: string,
  fields: EnvelopeFields = {},
  details?: Record<string, unknown>,
): string {
  const { ref, ...rest } = fields;
  const envelope = ref !== undefined && MESSAGE_ID.test(ref) ? fields : rest;
  return buildFrame('error', envelope, {
    code,
    message: clip(message, MAX_ERROR_MESSAGE),
    ...(details ? { details } : {}),
  });
}

/** The major version of an `otp` field ("1.0" → "1"), or undefined when it is not a version string. */
export function majorVersion(otp: unknown): string | undefined {
  if (typeof otp !== 'string') return undefined;
  const match = /^(\d+)\.\d+$/.exec(otp);
  return match?.[1];
}
