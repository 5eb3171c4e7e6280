// OTP v1 frames (docs/protocol.md). One schema per message type and direction: the envelope members
// that type requires, and its payload (payloads.ts). The TypeScript types of frames and payloads are derived from
// these schemas (json-schema-to-ts, at the end of this file); agreement.ts checks them against the
// payload types the machines use (machines/types.ts).
//
// Envelope rules: otp, id, ts, type on every frame; sessionId on every frame after welcome (so not
// on hello); runId on run-scoped frames; ref on replies (pong -> ping, ack -> the acknowledged frame,
// step.result -> step.exec, welcome -> hello, error -> the offending frame when it had an id).
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ActionRefs, TestCaseStepSchema } from './actions.js';
import { ID_PATTERNS, OTP_VERSION_PATTERN } from './ids.js';
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
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Types the executor sends to the service. */
export const INBOUND_TYPES = ['hello', 'pong', 'ack', 'error', 'step.result', 'event.recorded', 'record.start', 'record.stop'] as const;
export type InboundType = (typeof INBOUND_TYPES)[number];

/** Types the service sends to the executor. */
export const OUTBOUND_TYPES = [
  'welcome',
  'ping',
  'run.start',
  'step.exec',
  'run.cancel',
  'run.finished',
  'record.start',
  'record.stop',
  'ack',
  'error',
] as const;
export type OutboundType = (typeof OUTBOUND_TYPES)[number];


// ---- Schemas ----

const ENVELOPE_PROPERTIES = {
  otp: { description: 'Protocol version, major.minor (this service speaks 1.0).', type: 'string', pattern: OTP_VERSION_PATTERN },
  id: { description: 'Message id, prefix msg_.', type: 'string', pattern: ID_PATTERNS.message },
  ts: { description: 'When the message was sent: ISO 8601 UTC timestamp.', type: 'string', format: 'date-time' },
  type: { description: 'Message type.', enum: [...MESSAGE_TYPES] },
  sessionId: { description: 'Session id, prefix ots_ (every frame after welcome).', type: 'string', pattern: ID_PATTERNS.session },
  runId: { description: 'Run id, prefix otr_ (run-scoped frames).', type: 'string', pattern: ID_PATTERNS.run },
  ref: { description: 'Id of the message this one answers, prefix msg_.', type: 'string', pattern: ID_PATTERNS.message },
  payload: { description: 'Content depending on type.', type: 'object' },
} as const satisfies Record<string, JsonSchema>;

type EnvelopeField = keyof typeof ENVELOPE_PROPERTIES;

export const EnvelopeSchema = {
  $id: 'Envelope',
  title: 'Envelope',
  description: 'Members every OTP frame may carry; each message type fixes which of them it requires (see the <Type>Message schemas).',
  type: 'object',
  properties: ENVELOPE_PROPERTIES,
  required: ['otp', 'id', 'ts', 'type'],
  additionalProperties: false,
} as const satisfies JsonSchema;

const EMPTY_PAYLOAD = {
  description: 'No content (may be omitted).',
  type: 'object',
  additionalProperties: false,
} as const satisfies JsonSchema;

/** The shape messageSchema() builds, spelled out for FromSchema (the properties are built in a loop). */
type MessageSchema<T extends MessageType, F extends EnvelopeField, R extends readonly EnvelopeField[], P> = {
  readonly $id: string;
  readonly title: string;
  readonly description: string;
  readonly type: 'object';
  readonly properties: Pick<typeof ENVELOPE_PROPERTIES, 'otp' | 'id' | 'ts' | F> & {
    readonly type: { readonly description: 'Message type.'; readonly const: T };
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
function messageSchema<
  const T extends MessageType,
  const F extends readonly EnvelopeField[],
  const R extends readonly EnvelopeField[],
  const P extends JsonSchema,
>(type: T, id: string, description: string, fields: F, required: R, payload: P): MessageSchema<T, F[number], R, P> {
  const properties: Record<string, JsonSchema> = {};
  for (const f of ['otp', 'id', 'ts', 'type', ...fields] as EnvelopeField[]) properties[f] = ENVELOPE_PROPERTIES[f];
  properties.type = { description: 'Message type.', const: type };
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

// -- inbound frames (executor -> service) --

export const HelloMessageSchema = messageSchema('hello', 'HelloMessage', 'Executor opens the handshake (first frame; no sessionId yet).', [], ['payload'], {
  $ref: 'HelloPayload',
  description: 'The executor and its capabilities.',
});

export const PongMessageSchema = messageSchema('pong', 'PongMessage', 'Executor answers a ping (ref = the ping id).', ['sessionId', 'ref'], ['sessionId', 'ref'], EMPTY_PAYLOAD);

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

export const WelcomeMessageSchema = messageSchema('welcome', 'WelcomeMessage', 'Service answers hello (ref = the hello id).', ['sessionId', 'ref'], ['ref', 'payload'], {
  $ref: 'WelcomePayload',
  description: 'Session and limits.',
});

export const PingMessageSchema = messageSchema('ping', 'PingMessage', 'Keep-alive, every keepaliveSec seconds; answered by pong.', ['sessionId'], ['sessionId'], EMPTY_PAYLOAD);

export const RunStartMessageSchema = messageSchema('run.start', 'RunStartMessage', 'A run begins.', ['sessionId', 'runId'], ['sessionId', 'runId', 'payload'], {
  $ref: 'RunStartPayload',
  description: 'The run.',
});

export const StepExecMessageSchema = messageSchema('step.exec', 'StepExecMessage', 'One step to perform.', ['sessionId', 'runId'], ['sessionId', 'runId', 'payload'], {
  $ref: 'StepExecPayload',
  description: 'The step.',
});

export const RunCancelMessageSchema = messageSchema('run.cancel', 'RunCancelMessage', 'Stop the run: the step in flight and later ones end with E_CANCELLED.', ['sessionId', 'runId'], ['sessionId', 'runId', 'payload'], {
  description: 'Which run, and why.',
  type: 'object',
  properties: {
    runId: { description: 'Run id, prefix otr_.', type: 'string', pattern: ID_PATTERNS.run },
    reason: { description: 'Why the run is cancelled.', type: 'string' },
  },
  required: ['runId'],
  additionalProperties: false,
});

export const RunFinishedMessageSchema = messageSchema('run.finished', 'RunFinishedMessage', 'The run is over.', ['sessionId', 'runId'], ['sessionId', 'runId', 'payload'], {
  $ref: 'RunFinishedPayload',
  description: 'Verdict and counts.',
});

export const RecordStartMessageSchema = messageSchema(
  'record.start',
  'RecordStartMessage',
  'Start recording user actions; each arrives as event.recorded (ref = the executor\'s record.start when it asked).',
  ['sessionId', 'ref'],
  ['sessionId', 'payload'],
  recordStartPayload,
);

export const RecordStopMessageSchema = messageSchema(
  'record.stop',
  'RecordStopMessage',
  'The recording stopped (ref = the executor\'s record.stop when it asked); stop recording.',
  ['sessionId', 'ref'],
  ['sessionId', 'payload'],
  recordStopPayload,
);

export const ServiceErrorMessageSchema = messageSchema(
  'error',
  'ServiceErrorMessage',
  'Service reports an error (ref = the offending frame, when it had an id). Before welcome there is no sessionId.',
  ['sessionId', 'runId', 'ref'],
  ['payload'],
  { $ref: 'ServiceErrorPayload', description: 'The error.' },
);

/** Schema id of each type the executor sends. */
export const inboundMessageSchemas: Readonly<Record<InboundType, string>> = {
  hello: 'HelloMessage',
  pong: 'PongMessage',
  ack: 'AckMessage',
  error: 'ErrorMessage',
  'step.result': 'StepResultMessage',
  'event.recorded': 'EventRecordedMessage',
  'record.start': 'RecordStartRequestMessage',
  'record.stop': 'RecordStopRequestMessage',
};

/** Schema id of each type the service sends. */
export const outboundMessageSchemas: Readonly<Record<OutboundType, string>> = {
  welcome: 'WelcomeMessage',
  ping: 'PingMessage',
  'run.start': 'RunStartMessage',
  'step.exec': 'StepExecMessage',
  'run.cancel': 'RunCancelMessage',
  'run.finished': 'RunFinishedMessage',
  'record.start': 'RecordStartMessage',
  'record.stop': 'RecordStopMessage',
  ack: 'AckMessage',
  error: 'ServiceErrorMessage',
};

export const messageSchemas: readonly JsonSchema[] = [
  EnvelopeSchema,
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
  HelloMessageSchema,
  PongMessageSchema,
  AckMessageSchema,
  ErrorMessageSchema,
  StepResultMessageSchema,
  EventRecordedMessageSchema,
  RecordStartRequestMessageSchema,
  RecordStopRequestMessageSchema,
  WelcomeMessageSchema,
  PingMessageSchema,
  RunStartMessageSchema,
  StepExecMessageSchema,
  RunCancelMessageSchema,
  RunFinishedMessageSchema,
  RecordStartMessageSchema,
  RecordStopMessageSchema,
  ServiceErrorMessageSchema,
];

// ---- Types derived from the schemas ----

/** FromSchema options for frames: every payload schema may be `$ref`d, locators and steps as in actions.ts. */
type MessageRefs = {
  references: [
    ...ActionRefs['references'],
    typeof TestCaseStepSchema,
    typeof CapabilitiesSchema,
    typeof HelloPayloadSchema,
    typeof ErrorPayloadSchema,
    typeof ServiceErrorPayloadSchema,
    typeof StepResultPayloadSchema,
    typeof EventRecordedPayloadSchema,
    typeof WelcomePayloadSchema,
    typeof RunStartPayloadSchema,
    typeof StepExecPayloadSchema,
    typeof RunFinishedPayloadSchema,
  ];
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

export type HelloMessage = Derived<typeof HelloMessageSchema>;
export type PongMessage = Derived<typeof PongMessageSchema>;
export type AckMessage = Derived<typeof AckMessageSchema>;
export type ErrorMessage = Derived<typeof ErrorMessageSchema>;
export type StepResultMessage = Derived<typeof StepResultMessageSchema>;
export type EventRecordedMessage = Derived<typeof EventRecordedMessageSchema>;
export type RecordStartRequestMessage = Derived<typeof RecordStartRequestMessageSchema>;
export type RecordStopRequestMessage = Derived<typeof RecordStopRequestMessageSchema>;
export type WelcomeMessage = Derived<typeof WelcomeMessageSchema>;
export type PingMessage = Derived<typeof PingMessageSchema>;
export type RunStartMessage = Derived<typeof RunStartMessageSchema>;
export type StepExecMessage = Derived<typeof StepExecMessageSchema>;
export type RunCancelMessage = Derived<typeof RunCancelMessageSchema>;
export type RunFinishedMessage = Derived<typeof RunFinishedMessageSchema>;
export type RecordStartMessage = Derived<typeof RecordStartMessageSchema>;
export type RecordStopMessage = Derived<typeof RecordStopMessageSchema>;
export type ServiceErrorMessage = Derived<typeof ServiceErrorMessageSchema>;

/** A frame from the executor that passed its schema. */
export type InboundMessage =
  | HelloMessage
  | PongMessage
  | AckMessage
  | ErrorMessage
  | StepResultMessage
  | EventRecordedMessage
  | RecordStartRequestMessage
  | RecordStopRequestMessage;

/** A frame the service sends. */
export type OutboundMessage =
  | WelcomeMessage
  | PingMessage
  | RunStartMessage
  | StepExecMessage
  | RunCancelMessage
  | RunFinishedMessage
  | RecordStartMessage
  | RecordStopMessage
  | AckMessage
  | ServiceErrorMessage;
