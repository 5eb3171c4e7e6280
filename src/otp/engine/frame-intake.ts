// Frame intake: the text of one inbound frame made into a message of the protocol, or the reason it
// is not one. It must be JSON, an object, of a protocol version this service speaks, and valid
// against its message's schema (validators.ts: the first-problem validator, then, for a small invalid
// frame, the one that lists every problem; text PostgreSQL cannot store is refused, or replaced in a
// step.result's observed text). What the session does with a message is the session's (session.ts).
import type { FieldError } from '../../validation/field-errors.js';
import { majorVersion, OTP_VERSION } from '../protocol/frames.js';
import type { InboundMessage } from '../protocol/schemas/index.js';
import { validateInbound } from '../protocol/validators.js';

/** Why a frame is no message: the session answers it with an `error` frame (and counts it, or closes). */
export interface Refusal {
  ok: false;
  /** The frame speaks a protocol version this service does not (the session closes, 4426). */
  version?: true;
  reason: string;
  /** The frame's id, when it has one that looks like one. */
  ref?: string;
  details?: { fields: FieldError[] };
}

/** A valid frame's message is the parsed frame itself (its `id` is the ref of an answer). */
export type Intake = { ok: true; message: InboundMessage } | Refusal;

const SPOKEN_MAJOR = OTP_VERSION.split('.')[0];

const refusal = (reason: string, ref?: string): Refusal => ({ ok: false, reason, ...(ref ? { ref } : {}) });

export function readFrame(text: string): Intake {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return refusal('frame is not valid JSON');
  }
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame))
    return refusal('a frame must be a JSON object');
  const raw = frame as Record<string, unknown>;
  const ref = typeof raw.id === 'string' && raw.id.startsWith('msg_') ? raw.id : undefined;
  const major = majorVersion(raw.otp);
  if (major !== undefined && major !== SPOKEN_MAJOR) {
    const reason = `protocol version ${String(raw.otp)} is not supported; this service speaks ${OTP_VERSION}`;
    return { ...refusal(reason, ref), version: true };
  }
  let result: ReturnType<typeof validateInbound>;
  try {
    result = validateInbound(frame, text);
  } catch {
    // The recursive schemas (locators nest through `within`) overflow the stack on absurd depths.
    return refusal('frame nests too deeply to be checked', ref);
  }
  if (result.ok) return result;
  const summary = result.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return { ...refusal(`invalid frame: ${summary}`, ref), details: { fields: result.errors } };
}
