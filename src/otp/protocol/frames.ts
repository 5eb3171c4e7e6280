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
  return buildFrame('error', envelope, { code, message: clip(message, MAX_ERROR_MESSAGE), ...(details ? { details } : {}) });
}

/** The major version of an `otp` field ("1.0" → "1"), or undefined when it is not a version string. */
export function majorVersion(otp: unknown): string | undefined {
  if (typeof otp !== 'string') return undefined;
  const match = /^(\d+)\.\d+$/.exec(otp);
  return match?.[1];
}
