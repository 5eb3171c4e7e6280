// OTP v1 frames (spec 2.1-2.3, 2.5, 2.8-2.10, 6; DESIGN "Protocol decisions"). One schema per
// message type and direction: the envelope members that type requires, and its payload.
//
// Envelope rules: otp, id, ts, type on every frame; sessionId on every frame after welcome (so not
// on hello); runId on run-scoped frames; ref on replies (pong -> ping, ack -> the acknowledged frame,
// step.result -> step.exec, welcome -> hello, error -> the offending frame when it had an id).
import type { HelloPayload, StepReport, StepExecPayload, FinalRunStatus } from '../../../../machines/types.js';
import { FINAL_RUN_STATUSES, OtpErrorCode, STEP_STATUSES } from '../../../../machines/types.js';
import type { JsonSchema } from './locator.js';
import type { TestCaseStep } from './actions.js';
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

// ---- TypeScript shapes of the frames (kept next to their schemas; payloads come from machines/types.ts) ----

export interface EnvelopeFields {
  otp: string;
  id: string;
  ts: string;
  sessionId?: string;
  runId?: string;
  ref?: string;
}
type Empty = Record<string, never>;

export interface ErrorPayload {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}
export interface EventRecordedPayload {
  recordingId?: string;
  step: TestCaseStep;
  at?: string;
}

export interface HelloMessage extends EnvelopeFields {
  type: 'hello';
  payload: HelloPayload;
}
export interface PongMessage extends EnvelopeFields {
  type: 'pong';
  sessionId: string;
  ref: string;
  payload?: Empty;
}
export interface AckMessage extends EnvelopeFields {
  type: 'ack';
  sessionId: string;
  ref: string;
  payload?: Empty;
}
export interface ErrorMessage extends EnvelopeFields {
  type: 'error';
  payload: ErrorPayload;
}
export interface StepResultMessage extends EnvelopeFields {
  type: 'step.result';
  sessionId: string;
  runId: string;
  ref: string;
  payload: StepReport;
}
export interface EventRecordedMessage extends EnvelopeFields {
  type: 'event.recorded';
  sessionId: string;
  payload: EventRecordedPayload;
}
/** A frame from the executor that passed its schema. */
export type InboundMessage = HelloMessage | PongMessage | AckMessage | ErrorMessage | StepResultMessage | EventRecordedMessage;

export interface WelcomeLimits {
  maxFrameBytes: number;
  maxSteps: number;
  stepTimeoutMs: number;
  maxParallel: number;
  keepaliveSec: number;
}
export interface WelcomePayload {
  sessionId: string;
  serverTime: string;
  keepaliveSec: number;
  limits: WelcomeLimits;
}
export interface RunStartPayload {
  runId: string;
  vars: Record<string, string>;
  allowedOrigins: string[];
  testCases: Array<{ id: string; title: string; steps: number }>;
  totalSteps: number;
  defaults: { stepTimeoutMs: number };
}
export interface RunFinishedPayload {
  runId: string;
  status: FinalRunStatus;
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  durationMs: number;
  reason?: string;
}
export interface WelcomeMessage extends EnvelopeFields {
  type: 'welcome';
  ref: string;
  payload: WelcomePayload;
}
export interface PingMessage extends EnvelopeFields {
  type: 'ping';
  sessionId: string;
  payload?: Empty;
}
export interface RunStartMessage extends EnvelopeFields {
  type: 'run.start';
  sessionId: string;
  runId: string;
  payload: RunStartPayload;
}
export interface StepExecMessage extends EnvelopeFields {
  type: 'step.exec';
  sessionId: string;
  runId: string;
  payload: StepExecPayload;
}
export interface RunCancelMessage extends EnvelopeFields {
  type: 'run.cancel';
  sessionId: string;
  runId: string;
  payload: { runId: string; reason?: string };
}
export interface RunFinishedMessage extends EnvelopeFields {
  type: 'run.finished';
  sessionId: string;
  runId: string;
  payload: RunFinishedPayload;
}
export interface RecordStartMessage extends EnvelopeFields {
  type: 'record.start';
  sessionId: string;
  payload: { recordingId: string };
}
export interface RecordStopMessage extends EnvelopeFields {
  type: 'record.stop';
  sessionId: string;
  payload: { recordingId: string };
}
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
  | ErrorMessage;

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

export const EnvelopeSchema: JsonSchema = {
  $id: 'Envelope',
  title: 'Envelope',
  description: 'Members every OTP frame may carry; each message type fixes which of them it requires (see the <Type>Message schemas).',
  type: 'object',
  properties: ENVELOPE_PROPERTIES,
  required: ['otp', 'id', 'ts', 'type'],
  additionalProperties: false,
};

const EMPTY_PAYLOAD: JsonSchema = {
  description: 'No content (may be omitted).',
  type: 'object',
  additionalProperties: false,
};

/**
 * A full frame of one type: the envelope members listed in `fields` (the others are not allowed),
 * `required` of them mandatory (payload is required unless listed in optionalPayload), and its payload.
 */
function messageSchema(
  type: MessageType,
  id: string,
  description: string,
  fields: readonly EnvelopeField[],
  required: readonly EnvelopeField[],
  payload: JsonSchema,
): JsonSchema {
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
  };
}

// -- payloads --

export const CapabilitiesSchema: JsonSchema = {
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
};

export const HelloPayloadSchema: JsonSchema = {
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
};

export const ErrorPayloadSchema: JsonSchema = {
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
};

const OTP_ERROR_CODES = Object.values(OtpErrorCode);

export const ServiceErrorPayloadSchema: JsonSchema = {
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
};

export const StepResultPayloadSchema: JsonSchema = {
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
};

export const EventRecordedPayloadSchema: JsonSchema = {
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
};

export const WelcomePayloadSchema: JsonSchema = {
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
};

export const RunStartPayloadSchema: JsonSchema = {
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
};

export const StepExecPayloadSchema: JsonSchema = {
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
};

export const RunFinishedPayloadSchema: JsonSchema = {
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
};

const recordingPayload = (description: string): JsonSchema => ({
  description,
  type: 'object',
  properties: { recordingId: { description: 'Recording id.', type: 'string', minLength: 1, maxLength: 100 } },
  required: ['recordingId'],
  additionalProperties: false,
});

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
