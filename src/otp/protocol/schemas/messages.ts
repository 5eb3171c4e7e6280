// OTP v1 frames (docs/protocol.md). One schema per message type and direction: the envelope members
// that type requires, and its payload. The TypeScript types of frames and payloads are derived from
// these schemas (json-schema-to-ts, at the end of this file); agreement.ts checks them against the
// payload types the machines use (machines/types.ts).
//
// Envelope rules: otp, id, ts, type on every frame; sessionId on every frame after welcome (so not
// on hello); runId on run-scoped frames; ref on replies (pong -> ping, ack -> the acknowledged frame,
// step.result -> step.exec, welcome -> hello, error -> the offending frame when it had an id).
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { FINAL_RUN_STATUSES, OtpErrorCode, STEP_STATUSES } from '../../../../machines/types.js';
import type { JsonSchema } from './locator.js';
import type { ActionRefs, TestCaseStepSchema } from './actions.js';
import { EVIDENCE_MODES } from './actions.js';

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
export const INBOUND_TYPES = ['hello', 'pong', 'ack', 'error', 'step.result', 'event.recorded'] as const;
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

export const ID_PATTERNS = {
  message: '^msg_[A-Za-z0-9_-]{1,64}$',
  session: '^ots_[A-Za-z0-9_-]{1,64}$',
  run: '^otr_[A-Za-z0-9_-]{1,64}$',
  asset: '^ast_[A-Za-z0-9_-]{1,64}$',
  project: '^prj_[A-Za-z0-9_-]{1,64}$',
} as const;

export const OTP_VERSION_PATTERN = '^\\d+\\.\\d+$';

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

// -- payloads --

export const CapabilitiesSchema = {
  $id: 'Capabilities',
  title: 'Capabilities',
  description: 'What the executor can do. A step that needs a capability declared false is skipped with E_CAPABILITY.',
  type: 'object',
  properties: {
    record: { description: 'Can record user actions (record.start / event.recorded).', type: 'boolean' },
    replay: { description: 'Can perform steps (step.exec).', type: 'boolean' },
    screenshot: { description: 'Can take screenshots (screenshot steps, evidence).', type: 'boolean' },
    upload: { description: 'Can set file inputs (upload steps).', type: 'boolean' },
    crossOrigin: { description: 'Can navigate across origins.', type: 'boolean' },
    eval: { description: 'Can run scripts (eval steps).', type: 'boolean' },
    maxParallel: { description: 'Most runs the executor takes at once.', type: 'integer', minimum: 1, maximum: 64 },
  },
  additionalProperties: false,
} as const satisfies JsonSchema;

export const HelloPayloadSchema = {
  $id: 'HelloPayload',
  title: 'HelloPayload',
  description: 'What the executor says about itself when it opens the handshake.',
  type: 'object',
  properties: {
    executor: { description: 'Kind of executor, for example runner or extension (open set).', type: 'string', minLength: 1, maxLength: 100 },
    name: { description: 'Executor name.', type: 'string', maxLength: 200 },
    version: { description: 'Executor version.', type: 'string', maxLength: 100 },
    capabilities: { $ref: 'Capabilities', description: 'What the executor can do.' },
    projectId: { description: 'Project the executor works for (prefix prj_); must be the project of the credentials.', type: 'string', pattern: ID_PATTERNS.project },
  },
  required: ['executor', 'capabilities'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const ErrorPayloadSchema = {
  $id: 'ErrorPayload',
  title: 'ErrorPayload',
  description: 'An error reported by the executor.',
  type: 'object',
  properties: {
    code: { description: 'Error code, E_ prefix (E_INTERNAL, E_VERSION, ...).', type: 'string', minLength: 1, maxLength: 100 },
    message: { description: 'Human-readable explanation.', type: 'string', maxLength: 10000 },
    details: { description: 'Further facts about the error.', type: 'object' },
  },
  required: ['code', 'message'],
  additionalProperties: false,
} as const satisfies JsonSchema;

const OTP_ERROR_CODES = Object.values(OtpErrorCode);

export const ServiceErrorPayloadSchema = {
  $id: 'ServiceErrorPayload',
  title: 'ServiceErrorPayload',
  description: 'An error reported by the service.',
  type: 'object',
  properties: {
    code: { description: 'OTP error code.', enum: OTP_ERROR_CODES },
    message: { description: 'Human-readable explanation.', type: 'string' },
    details: { description: 'Further facts, such as the failing fields of an invalid frame.', type: 'object' },
  },
  required: ['code', 'message'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const StepResultPayloadSchema = {
  $id: 'StepResultPayload',
  title: 'StepResultPayload',
  description: 'Result of one step, answering its step.exec.',
  type: 'object',
  properties: {
    stepIndex: { description: 'Position of the step in the run (the stepIndex of the step.exec).', type: 'integer', minimum: 0 },
    status: { description: 'Outcome of the step.', enum: [...STEP_STATUSES] },
    durationMs: { description: 'Time the step took, in milliseconds.', type: 'integer', minimum: 0 },
    error: {
      description: 'Why the step did not pass.',
      type: 'object',
      properties: {
        code: { description: 'OTP error code (E_LOCATOR_NOT_FOUND, E_TIMEOUT, E_ASSERT_FAILED, ...).', type: 'string', minLength: 1, maxLength: 100 },
        message: { description: 'Human-readable explanation.', type: 'string', maxLength: 10000 },
        triedLocators: { description: 'Locators tried before giving up (E_LOCATOR_NOT_FOUND).', type: 'array', maxItems: 100, items: { $ref: 'Locator' } },
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
    evidence: {
      description: 'Evidence captured for the step; files travel over REST, not over the WebSocket.',
      type: 'object',
      properties: {
        screenshotAssetId: { description: 'Screenshot uploaded through POST /api/v1/otp/evidence (prefix ast_).', type: 'string', pattern: ID_PATTERNS.asset },
        consoleErrors: { description: 'Browser console errors seen during the step.', type: 'array', maxItems: 100, items: { description: 'One console error.', type: 'string' } },
      },
      additionalProperties: false,
    },
    actual: { description: 'Observed value (asserts).', type: 'string', maxLength: 100000 },
    usedLocator: { $ref: 'Locator', description: 'The locator that matched (from candidates, the one that worked).' },
  },
  required: ['stepIndex', 'status'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const EventRecordedPayloadSchema = {
  $id: 'EventRecordedPayload',
  title: 'EventRecordedPayload',
  description: 'One step recorded by the executor, in test-case step shape.',
  type: 'object',
  properties: {
    recordingId: { description: 'Recording the step belongs to (from record.start).', type: 'string', minLength: 1, maxLength: 100 },
    step: { $ref: 'TestCaseStep', description: 'The recorded step; sensitive values as {{secret_N}}.' },
    at: { description: 'When the user performed it: ISO 8601 UTC timestamp.', type: 'string', format: 'date-time' },
  },
  required: ['step'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const WelcomePayloadSchema = {
  $id: 'WelcomePayload',
  title: 'WelcomePayload',
  description: 'The service accepts the executor: its session and the limits that apply.',
  type: 'object',
  properties: {
    sessionId: { description: 'Id of the new session, prefix ots_.', type: 'string', pattern: ID_PATTERNS.session },
    serverTime: { description: 'Service clock: ISO 8601 UTC timestamp.', type: 'string', format: 'date-time' },
    keepaliveSec: { description: 'Seconds between pings.', type: 'integer', minimum: 1 },
    limits: {
      description: 'Protocol limits.',
      type: 'object',
      properties: {
        maxFrameBytes: { description: 'Largest frame, in bytes.', type: 'integer', minimum: 1 },
        maxSteps: { description: 'Most steps in one run.', type: 'integer', minimum: 1 },
        stepTimeoutMs: { description: 'Default step time-out, in milliseconds.', type: 'integer', minimum: 1 },
        maxParallel: { description: 'Most runs the session takes at once.', type: 'integer', minimum: 1, maximum: 64 },
        keepaliveSec: { description: 'Seconds between pings.', type: 'integer', minimum: 1 },
      },
      required: ['maxFrameBytes', 'maxSteps', 'stepTimeoutMs', 'maxParallel', 'keepaliveSec'],
      additionalProperties: false,
    },
  },
  required: ['sessionId', 'serverTime', 'keepaliveSec', 'limits'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const RunStartPayloadSchema = {
  $id: 'RunStartPayload',
  title: 'RunStartPayload',
  description: 'A run begins; its steps follow one step.exec at a time.',
  type: 'object',
  properties: {
    runId: { description: 'Run id, prefix otr_.', type: 'string', pattern: ID_PATTERNS.run },
    vars: { description: 'Values of {{name}} variables.', type: 'object', additionalProperties: { description: 'Value of the variable.', type: 'string' } },
    allowedOrigins: {
      description: 'Origins the executor may navigate to; others fail with E_NAVIGATION_BLOCKED.',
      type: 'array',
      items: { description: 'An origin (scheme://host[:port]).', type: 'string' },
    },
    testCases: {
      description: 'Test cases of the run, in order.',
      type: 'array',
      items: {
        description: 'One test case.',
        type: 'object',
        properties: {
          id: { description: 'Test case id.', type: 'string' },
          title: { description: 'Test case title.', type: 'string' },
          steps: { description: 'Number of steps of the test case.', type: 'integer', minimum: 0 },
        },
        required: ['id', 'title', 'steps'],
        additionalProperties: false,
      },
    },
    totalSteps: { description: 'Number of steps in the run.', type: 'integer', minimum: 0 },
    defaults: {
      description: 'Values used when a step does not set its own.',
      type: 'object',
      properties: { stepTimeoutMs: { description: 'Default step time-out, in milliseconds.', type: 'integer', minimum: 1 } },
      required: ['stepTimeoutMs'],
      additionalProperties: false,
    },
  },
  required: ['runId', 'vars', 'allowedOrigins', 'testCases', 'totalSteps', 'defaults'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const StepExecPayloadSchema = {
  $id: 'StepExecPayload',
  title: 'StepExecPayload',
  description: 'One step to perform; answered by step.result.',
  type: 'object',
  properties: {
    stepIndex: { description: 'Position of the step in the run.', type: 'integer', minimum: 0 },
    timeoutMs: { description: 'Time allowed for the step, in milliseconds.', type: 'integer', minimum: 1 },
    continueOnFail: { description: 'Whether the run goes on with the test case after this step fails.', type: 'boolean' },
    evidence: { description: 'When evidence is captured.', enum: [...EVIDENCE_MODES] },
    label: { description: 'Human-readable step label.', type: 'string' },
    step: { $ref: 'StepAction', description: 'The action, with {{name}} variables filled.' },
  },
  required: ['stepIndex', 'timeoutMs', 'continueOnFail', 'step'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const RunFinishedPayloadSchema = {
  $id: 'RunFinishedPayload',
  title: 'RunFinishedPayload',
  description: 'The run is over: its verdict and step counts.',
  type: 'object',
  properties: {
    runId: { description: 'Run id, prefix otr_.', type: 'string', pattern: ID_PATTERNS.run },
    status: { description: 'Final run status.', enum: [...FINAL_RUN_STATUSES] },
    passed: { description: 'Steps that passed.', type: 'integer', minimum: 0 },
    failed: { description: 'Steps that failed or errored (time-outs included).', type: 'integer', minimum: 0 },
    skipped: { description: 'Steps skipped.', type: 'integer', minimum: 0 },
    total: { description: 'Steps in the run.', type: 'integer', minimum: 0 },
    durationMs: { description: 'Duration of the run, in milliseconds.', type: 'integer', minimum: 0 },
    reason: { description: 'Why a cancelled or error run ended (absent for passed and failed).', type: 'string', maxLength: 1000 },
  },
  required: ['runId', 'status', 'passed', 'failed', 'skipped', 'total', 'durationMs'],
  additionalProperties: false,
} as const satisfies JsonSchema;

const recordingPayload = (description: string) =>
  ({
    description,
    type: 'object',
    properties: { recordingId: { description: 'Recording id.', type: 'string', minLength: 1, maxLength: 100 } },
    required: ['recordingId'],
    additionalProperties: false,
  }) as const;

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

export const RecordStartMessageSchema = messageSchema('record.start', 'RecordStartMessage', 'Start recording user actions; each arrives as event.recorded.', ['sessionId'], ['sessionId', 'payload'], recordingPayload('The recording to start.'));

export const RecordStopMessageSchema = messageSchema('record.stop', 'RecordStopMessage', 'Stop recording.', ['sessionId'], ['sessionId', 'payload'], recordingPayload('The recording to stop.'));

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
export type InboundMessage = HelloMessage | PongMessage | AckMessage | ErrorMessage | StepResultMessage | EventRecordedMessage;

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
