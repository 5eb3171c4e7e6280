// How the OTP protocol words errors about its own schemas (added to formatErrors in
// src/validation/field-errors.ts when the protocol schemas are registered). Executors read these
// messages in E_INVALID_FRAME error frames and REST callers in 400 details, so they name the
// protocol's terms: a version, an id with its prefix, a frame type.
import type { ErrorWording } from '../../validation/field-errors.js';
import type { JsonSchema } from '../../validation/schema-registry.js';
import { OTP_VERSION_PATTERN } from './schemas/ids.js';
import { EnvelopeSchema } from './schemas/messages.js';

const ENVELOPE_FIELDS: ReadonlySet<string> = new Set(
  Object.keys((EnvelopeSchema as { properties: object }).properties),
);

/** An id pattern of the protocol (ID_PATTERNS): a prefix such as `msg_`, then 1 to N id characters. */
const ID_PATTERN = /^\^([a-z]+_)\[A-Za-z0-9_-\]\{1,(\d+)\}\$$/;

export const otpErrorWording: ErrorWording = {
  pattern(pattern) {
    if (pattern === OTP_VERSION_PATTERN) return 'must be a version major.minor, such as "1.0"';
    const id = ID_PATTERN.exec(pattern);
    if (id) return `must be an id: "${id[1]}" followed by 1 to ${id[2]} letters, digits, _ or -`;
    return undefined;
  },
  // An envelope member that this message type does not carry (sessionId on hello, runId on pong):
  // the frame schemas fix `type` to a const, which names the frame in the message.
  unknownProperty(property, schema: JsonSchema | undefined) {
    const frameType = (schema as { properties?: { type?: { const?: unknown } } } | undefined)?.properties?.type?.const;
    if (typeof frameType === 'string' && ENVELOPE_FIELDS.has(property)) return `is not allowed in a ${frameType} frame`;
    return undefined;
  },
};
