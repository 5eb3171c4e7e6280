// OTP v1 frames (docs/protocol.md): one schema per message type and direction (the envelope members
// that type requires, envelope.ts, and its payload, payloads.ts), and the catalogue: the one table of
// which frame each side sends, from which every list of types and schemas follows (the validators'
// types and schema ids, the registration that /openapi.json lists, the TypeScript types of frames and
// payloads, derived with json-schema-to-ts). agreement.ts checks the payload types against the
// machines' (machines/types.ts).
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ActionRefs, TestCaseStepSchema } from './actions.js';
import { EMPTY_PAYLOAD, ENVELOPE_FIELDS, MESSAGE_TYPE_DESCRIPTION, messageSchema } from './envelope.js';
import { ID_PATTERNS } from './ids.js';
import type { JsonSchema } from './locator.js';
import {
  CapabilitiesSchema,
  ErrorPayloadSchema,
  EventRecordedPayloadSchema,
  HelloPayloadSchema,
  RunFinishedPayloadSchema,
  RunStartPayloadSchema,
  recordingPayload,
  recordRequestPayload,
  recordStartPayload,
  recordStopPayload,
  ServiceErrorPayloadSchema,
  StepExecPayloadSchema,
  StepResultPayloadSchema,
  WelcomePayloadSchema,
} from './payloads.js';

// ---- The frames ----

// -- inbound frames (executor -> service) --

export const HelloMessageSchema = messageSchema(
  'hello',
  'HelloMessage',
  'Executor opens the handshake (first frame; no sessionId yet).',
  [],
  ['payload'],
  {
    $ref: 'HelloPayload',
    description: 'The executor and its capabilities.',
  },
);

export const PongMessageSchema = messageSchema(
  'pong',
  'PongMessage',
  'Executor answers a ping (ref = the ping id).',
  ['sessionId', 'ref'],
  ['sessionId', 'ref'],
  EMPTY_PAYLOAD,
);

export const AckMessageSchema = messageSchema(
  'ack',
  'AckMessage',
  'Receipt of a frame (ref = its id): run.start, run.cancel, record.start, record.stop. Sent both ways.',
  ['sessionId', 'runId', 'ref'],
  ['sessionId', 'ref'],
  EMPTY_PAYLOAD,
);

export const ErrorMessageSchema = messageSchema(
  'error',
  'ErrorMessage',
  'Executor reports an error (ref = the offending frame, when there is one).',
  ['sessionId', 'runId', 'ref'],
  ['sessionId', 'payload'],
  { $ref: 'ErrorPayload', description: 'The error.' },
);

export const StepResultMessageSchema = messageSchema(
  'step.result',
  'StepResultMessage',
  'Result of one step (ref = the step.exec id).',
  ['sessionId', 'runId', 'ref'],
  ['sessionId', 'runId', 'ref', 'payload'],
  { $ref: 'StepResultPayload', description: 'The result.' },
);

export const EventRecordedMessageSchema = messageSchema(
  'event.recorded',
  'EventRecordedMessage',
  'One step recorded while recording.',
  ['sessionId'],
  ['sessionId', 'payload'],
  { $ref: 'EventRecordedPayload', description: 'The recorded step.' },
);

export const RecordStartRequestMessageSchema = messageSchema(
  'record.start',
  'RecordStartRequestMessage',
  'Executor asks to record; the service answers record.start with the new recordingId (ref = this frame).',
  ['sessionId'],
  ['sessionId'],
  recordRequestPayload,
);

export const RecordStopRequestMessageSchema = messageSchema(
  'record.stop',
  'RecordStopRequestMessage',
  'Executor stops its recording; the service answers record.stop with the test case made (ref = this frame).',
  ['sessionId'],
  ['sessionId', 'payload'],
  recordingPayload('The recording to stop.'),
);

// -- outbound frames (service -> executor) --

export const WelcomeMessageSchema = messageSchema(
  'welcome',
  'WelcomeMessage',
  'Service answers hello (ref = the hello id).',
  ['sessionId', 'ref'],
  ['ref', 'payload'],
  {
    $ref: 'WelcomePayload',
    description: 'Session and limits.',
  },
);

export const PingMessageSchema = messageSchema(
  'ping',
  'PingMessage',
  'Keep-alive, every keepaliveSec seconds; answered by pong.',
  ['sessionId'],
  ['sessionId'],
  EMPTY_PAYLOAD,
);

export const RunStartMessageSchema = messageSchema(
  'run.start',
  'RunStartMessage',
  'A run begins.',
  ['sessionId', 'runId'],
  ['sessionId', 'runId', 'payload'],
  {
    $ref: 'RunStartPayload',
    description: 'The run.',
  },
);

export const StepExecMessageSchema = messageSchema(
  'step.exec',
  'StepExecMessage',
  'One step to perform.',
  ['sessionId', 'runId'],
  ['sessionId', 'runId', 'payload'],
  {
    $ref: 'StepExecPayload',
    description: 'The step.',
  },
);

export const RunCancelMessageSchema = messageSchema(
  'run.cancel',
  'RunCancelMessage',
  'Stop the run: the step in flight and later ones end with E_CANCELLED.',
  ['sessionId', 'runId'],
  ['sessionId', 'runId', 'payload'],
  {
    description: 'Which run, and why.',
    type: 'object',
    properties: {
      runId: { description: 'Run id, prefix otr_.', type: 'string', pattern: ID_PATTERNS.run },
      reason: { description: 'Why the run is cancelled.', type: 'string' },
    },
    required: ['runId'],
    additionalProperties: false,
  },
);

export const RunFinishedMessageSchema = messageSchema(
  'run.finished',
  'RunFinishedMessage',
  'The run is over.',
  ['sessionId', 'runId'],
  ['sessionId', 'runId', 'payload'],
  {
    $ref: 'RunFinishedPayload',
    description: 'Verdict and counts.',
  },
);

export const RecordStartMessageSchema = messageSchema(
  'record.start',
  'RecordStartMessage',
  "Start recording user actions; each arrives as event.recorded (ref = the executor's record.start when it asked).",
  ['sessionId', 'ref'],
  ['sessionId', 'payload'],
  recordStartPayload,
);

export const RecordStopMessageSchema = messageSchema(
  'record.stop',
  'RecordStopMessage',
  "The recording stopped (ref = the executor's record.stop when it asked); stop recording.",
  ['sessionId', 'ref'],
  ['sessionId', 'payload'],
  recordStopPayload,
);

export const ReconnectMessageSchema = messageSchema(
  'reconnect',
  'ReconnectMessage',
  'The service is draining: this socket closes next (4503); reconnect after retryAfterMs and resume the session with hello.resumeSessionId. Each executor of a process is given its own delay, spread so that the fleet does not return at once. An executor that ignores this frame reconnects as after any 4503.',
  ['sessionId'],
  ['sessionId', 'payload'],
  {
    description: 'When to come back.',
    type: 'object',
    properties: {
      retryAfterMs: {
        description: 'Wait this long (ms) after the close before reconnecting; 0: at once.',
        type: 'integer',
        minimum: 0,
      },
      reason: { description: 'Why the socket closes.', type: 'string' },
    },
    required: ['retryAfterMs'],
    additionalProperties: false,
  },
);

export const ServiceErrorMessageSchema = messageSchema(
  'error',
  'ServiceErrorMessage',
  'Service reports an error (ref = the offending frame, when it had an id). Before welcome there is no sessionId.',
  ['sessionId', 'runId', 'ref'],
  ['payload'],
  { $ref: 'ServiceErrorPayload', description: 'The error.' },
);

// ---- The catalogue ----

/** Each type the executor sends, with its frame's schema; in the order its refusals list them. */
const FROM_EXECUTOR = {
  hello: HelloMessageSchema,
  pong: PongMessageSchema,
  ack: AckMessageSchema,
  error: ErrorMessageSchema,
  'step.result': StepResultMessageSchema,
  'event.recorded': EventRecordedMessageSchema,
  'record.start': RecordStartRequestMessageSchema,
  'record.stop': RecordStopRequestMessageSchema,
} as const;

/** Each type the service sends, with its frame's schema. */
const FROM_SERVICE = {
  welcome: WelcomeMessageSchema,
  ping: PingMessageSchema,
  'run.start': RunStartMessageSchema,
  'step.exec': StepExecMessageSchema,
  'run.cancel': RunCancelMessageSchema,
  'run.finished': RunFinishedMessageSchema,
  'record.start': RecordStartMessageSchema,
  'record.stop': RecordStopMessageSchema,
  ack: AckMessageSchema,
  reconnect: ReconnectMessageSchema,
  error: ServiceErrorMessageSchema,
} as const;

/** The payloads frames name by `$ref`, as they are registered (and listed in /openapi.json). */
const REFERENCED_PAYLOADS = [
  CapabilitiesSchema,
  HelloPayloadSchema,
  ErrorPayloadSchema,
  ServiceErrorPayloadSchema,
  StepResultPayloadSchema,
  EventRecordedPayloadSchema,
  WelcomePayloadSchema,
  RunStartPayloadSchema,
  StepExecPayloadSchema,
  RunFinishedPayloadSchema,
] as const;

export type InboundType = keyof typeof FROM_EXECUTOR;
export type OutboundType = keyof typeof FROM_SERVICE;
export type MessageType = InboundType | OutboundType;

const schemaIds = <T extends string>(table: Readonly<Record<T, { $id: string }>>) =>
  Object.fromEntries(Object.entries<{ $id: string }>(table).map(([type, schema]) => [type, schema.$id])) as Readonly<
    Record<T, string>
  >;

/** Types the executor sends to the service. */
export const INBOUND_TYPES = Object.keys(FROM_EXECUTOR) as readonly InboundType[];
/** Types the service sends to the executor. */
export const OUTBOUND_TYPES = Object.keys(FROM_SERVICE) as readonly OutboundType[];
/** Schema id of each type the executor sends. */
export const inboundMessageSchemas = schemaIds<InboundType>(FROM_EXECUTOR);
/** Schema id of each type the service sends. */
export const outboundMessageSchemas = schemaIds<OutboundType>(FROM_SERVICE);

/**
 * Every type, in the order the protocol presents them (docs/protocol.md) and the envelope's `type`
 * lists them: the catalogue's types, no more and no fewer (the check below fails tsc otherwise).
 */
export const MESSAGE_TYPES = [
  'hello',
  'welcome',
  'ack',
  'error',
  'ping',
  'pong',
  'run.start',
  'run.cancel',
  'run.finished',
  'step.exec',
  'step.result',
  'record.start',
  'record.stop',
  'event.recorded',
  'reconnect',
] as const satisfies readonly MessageType[];
type EveryTypeListed = Exclude<MessageType, (typeof MESSAGE_TYPES)[number]> extends never ? true : never;
const everyTypeListed: EveryTypeListed = true;
void everyTypeListed;

export const EnvelopeSchema = {
  $id: 'Envelope',
  title: 'Envelope',
  description:
    'Members every OTP frame may carry; each message type fixes which of them it requires (see the <Type>Message schemas).',
  type: 'object',
  properties: {
    otp: ENVELOPE_FIELDS.otp,
    id: ENVELOPE_FIELDS.id,
    ts: ENVELOPE_FIELDS.ts,
    type: { description: MESSAGE_TYPE_DESCRIPTION, enum: [...MESSAGE_TYPES] },
    sessionId: ENVELOPE_FIELDS.sessionId,
    runId: ENVELOPE_FIELDS.runId,
    ref: ENVELOPE_FIELDS.ref,
    payload: ENVELOPE_FIELDS.payload,
  },
  required: ['otp', 'id', 'ts', 'type'],
  additionalProperties: false,
} as const satisfies JsonSchema;

/** Every schema of this file, registered in this order: the envelope, the payloads, the executor's frames, then the service's. */
export const messageSchemas: readonly JsonSchema[] = [
  EnvelopeSchema,
  ...REFERENCED_PAYLOADS,
  ...new Set<JsonSchema>([...Object.values(FROM_EXECUTOR), ...Object.values(FROM_SERVICE)]),
];

// ---- Types derived from the schemas ----

/** FromSchema options for frames: every payload schema may be `$ref`d, locators and steps as in actions.ts. */
type MessageRefs = {
  references: [...ActionRefs['references'], typeof TestCaseStepSchema, ...typeof REFERENCED_PAYLOADS];
  deserialize: ActionRefs['deserialize'];
};
type Derived<S extends JSONSchema> = FromSchema<S, MessageRefs>;

export type Capabilities = Derived<typeof CapabilitiesSchema>;
export type HelloPayload = Derived<typeof HelloPayloadSchema>;
export type ErrorPayload = Derived<typeof ErrorPayloadSchema>;
export type ServiceErrorPayload = Derived<typeof ServiceErrorPayloadSchema>;
export type StepResultPayload = Derived<typeof StepResultPayloadSchema>;
export type EventRecordedPayload = Derived<typeof EventRecordedPayloadSchema>;
export type WelcomePayload = Derived<typeof WelcomePayloadSchema>;
export type RunStartPayload = Derived<typeof RunStartPayloadSchema>;
export type StepExecPayload = Derived<typeof StepExecPayloadSchema>;
export type RunFinishedPayload = Derived<typeof RunFinishedPayloadSchema>;

/** A frame from the executor that passed its schema. */
export type InboundMessage = { [T in InboundType]: Derived<(typeof FROM_EXECUTOR)[T]> }[InboundType];
/** A frame the service sends. */
export type OutboundMessage = { [T in OutboundType]: Derived<(typeof FROM_SERVICE)[T]> }[OutboundType];
