// The envelope of an OTP frame (docs/protocol.md): the members every frame may carry, and the one
// builder of a frame's schema (`messageSchema`), which fixes the members its type requires and its
// payload. The frames themselves, and the catalogue they make, are in messages.ts.
//
// Envelope rules: otp, id, ts, type on every frame; sessionId on every frame after welcome (so not
// on hello); runId on run-scoped frames; ref on replies (pong -> ping, ack -> the acknowledged frame,
// step.result -> step.exec, welcome -> hello, error -> the offending frame when it had an id).
import { ID_PATTERNS, OTP_VERSION_PATTERN } from './ids.js';
import type { JsonSchema } from './locator.js';

/** The envelope's members but `type`, whose values the catalogue lists (messages.ts, EnvelopeSchema). */
export const ENVELOPE_FIELDS = {
  otp: {
    description: 'Protocol version, major.minor (this service speaks 1.0).',
    type: 'string',
    pattern: OTP_VERSION_PATTERN,
  },
  id: { description: 'Message id, prefix msg_.', type: 'string', pattern: ID_PATTERNS.message },
  ts: { description: 'When the message was sent: ISO 8601 UTC timestamp.', type: 'string', format: 'date-time' },
  sessionId: {
    description: 'Session id, prefix ots_ (every frame after welcome).',
    type: 'string',
    pattern: ID_PATTERNS.session,
  },
  runId: { description: 'Run id, prefix otr_ (run-scoped frames).', type: 'string', pattern: ID_PATTERNS.run },
  ref: {
    description: 'Id of the message this one answers, prefix msg_.',
    type: 'string',
    pattern: ID_PATTERNS.message,
  },
  payload: { description: 'Content depending on type.', type: 'object' },
} as const satisfies Record<string, JsonSchema>;

export const MESSAGE_TYPE_DESCRIPTION = 'Message type.';

type EnvelopeField = keyof typeof ENVELOPE_FIELDS | 'type';
/** The members a frame's type may carry besides otp, id, ts and type. */
type OptionalField = Exclude<EnvelopeField, 'otp' | 'id' | 'ts' | 'type'>;

export const EMPTY_PAYLOAD = {
  description: 'No content (may be omitted).',
  type: 'object',
  additionalProperties: false,
} as const satisfies JsonSchema;

/** The shape messageSchema() builds, spelled out for FromSchema (the properties are built in a loop). */
export type MessageSchema<T extends string, F extends OptionalField, R extends readonly OptionalField[], P> = {
  readonly $id: string;
  readonly title: string;
  readonly description: string;
  readonly type: 'object';
  readonly properties: Pick<typeof ENVELOPE_FIELDS, 'otp' | 'id' | 'ts' | F> & {
    readonly type: { readonly description: typeof MESSAGE_TYPE_DESCRIPTION; readonly const: T };
    readonly payload: P;
  };
  readonly required: readonly ['otp', 'id', 'ts', 'type', ...R];
  readonly additionalProperties: false;
};

/**
 * A full frame of one type: otp, id, ts and type, the envelope members listed in `fields` (the others
 * are not allowed), the `required` ones mandatory (payload only when listed there), and its payload.
 * The result is cast to MessageSchema, which states the same members in the same order for FromSchema.
 */
export function messageSchema<
  const T extends string,
  const F extends readonly OptionalField[],
  const R extends readonly OptionalField[],
  const P extends JsonSchema,
>(type: T, id: string, description: string, fields: F, required: R, payload: P): MessageSchema<T, F[number], R, P> {
  const properties: Record<string, JsonSchema> = {};
  for (const f of ['otp', 'id', 'ts', 'type', ...fields] as EnvelopeField[])
    properties[f] = f === 'type' ? { description: MESSAGE_TYPE_DESCRIPTION, const: type } : ENVELOPE_FIELDS[f];
  properties.payload = payload;
  return {
    $id: id,
    title: id,
    description,
    type: 'object',
    properties,
    required: ['otp', 'id', 'ts', 'type', ...required],
    additionalProperties: false,
  } as unknown as MessageSchema<T, F[number], R, P>;
}
