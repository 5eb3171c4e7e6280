// OTP v1 payloads (docs/protocol.md): what each frame carries in `payload`. The frames that carry
// them, and the TypeScript types derived from both, are in messages.ts.
import { FINAL_RUN_STATUSES, OBSERVED_TEXT_FIELDS, OtpErrorCode, STEP_STATUSES } from '../../../../machines/types.js';
import { ID_PATTERNS } from './ids.js';
import type { JsonSchema } from './locator.js';
import { StepNavigationsSchema } from './navigations.js';
import { EVIDENCE_MODES } from './step-vocabulary.js';

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
    executor: {
      description: 'Kind of executor, for example runner or extension (open set).',
      type: 'string',
      minLength: 1,
      maxLength: 100,
    },
    name: { description: 'Executor name.', type: 'string', maxLength: 200 },
    version: { description: 'Executor version.', type: 'string', maxLength: 100 },
    capabilities: { $ref: 'Capabilities', description: 'What the executor can do.' },
    projectId: {
      description: 'Project the executor works for (prefix prj_); must be the project of the credentials.',
      type: 'string',
      pattern: ID_PATTERNS.project,
    },
    resumeSessionId: {
      description:
        'Resume this session (prefix ots_) after a dropped connection or a `4503` close, within the resume window (30 s by default), with a key of the same project. The welcome then says `resumed: true` and the runs of the session go on; see docs/protocol.md, "Resuming a session".',
      type: 'string',
      pattern: ID_PATTERNS.session,
    },
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
    code: {
      description: 'Error code, E_ prefix (E_INTERNAL, E_VERSION, ...).',
      type: 'string',
      minLength: 1,
      maxLength: 100,
    },
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
    stepIndex: {
      description: 'Position of the step in the run (the stepIndex of the step.exec).',
      type: 'integer',
      minimum: 0,
    },
    status: { description: 'Outcome of the step.', enum: [...STEP_STATUSES] },
    durationMs: { description: 'Time the step took, in milliseconds.', type: 'integer', minimum: 0 },
    error: {
      description: 'Why the step did not pass.',
      type: 'object',
      properties: {
        code: {
          description: 'OTP error code (E_LOCATOR_NOT_FOUND, E_TIMEOUT, E_ASSERT_FAILED, ...).',
          type: 'string',
          minLength: 1,
          maxLength: 100,
        },
        message: { description: 'Human-readable explanation.', type: 'string', maxLength: 10000 },
        triedLocators: {
          description:
            'Locators tried before giving up (E_LOCATOR_NOT_FOUND), in order, each with how many elements it matched (count).',
          type: 'array',
          maxItems: 100,
          items: { $ref: 'TriedLocator' },
        },
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
    evidence: {
      description: 'Evidence captured for the step; files travel over REST, not over the WebSocket.',
      type: 'object',
      properties: {
        screenshotAssetId: {
          description: 'Screenshot uploaded through POST /api/v1/otp/evidence (prefix ast_).',
          type: 'string',
          pattern: ID_PATTERNS.asset,
        },
        consoleErrors: {
          description: 'Browser console errors seen during the step.',
          type: 'array',
          maxItems: 100,
          items: { description: 'One console error.', type: 'string' },
        },
        navigations: StepNavigationsSchema,
      },
      additionalProperties: false,
    },
    actual: { description: 'Observed value (asserts).', type: 'string', maxLength: 100000 },
    usedLocator: { $ref: 'Locator', description: 'The locator that matched (from candidates, the one that worked).' },
    triedLocators: {
      description:
        'Optional, on a step that passed through a candidate other than its first: the candidates tried in order, each with its count (and, for one match, visible and enabled). The service proposes locator fixes from it (GET /ai/healing).',
      type: 'array',
      maxItems: 100,
      items: { $ref: 'TriedLocator' },
    },
    textReplaced: {
      description:
        'The fields of observed text (actual, error.message, evidence.consoleErrors) in which NUL characters and lone UTF-16 surrogates, which cannot be stored, were replaced with U+FFFD. An executor that replaced them before sending says so here; the service adds the fields it replaced itself (it stores such text replaced, and keeps the verdict).',
      type: 'array',
      maxItems: OBSERVED_TEXT_FIELDS.length,
      uniqueItems: true,
      items: { description: 'A field of observed text.', enum: [...OBSERVED_TEXT_FIELDS] },
    },
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
    recordingId: {
      description: 'Recording the step belongs to (from record.start).',
      type: 'string',
      minLength: 1,
      maxLength: 100,
    },
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
    apiUrl: {
      description:
        'HTTP base address of the service (REST is under {apiUrl}/api/v1): where the executor uploads evidence and downloads assets. From PUBLIC_URL, else the REST listener.',
      type: 'string',
      format: 'uri',
    },
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
    resumed: {
      description:
        'True when the hello resumed an existing session (hello.resumeSessionId): its runs go on, the step in flight of each is sent again.',
      type: 'boolean',
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
    vars: {
      description: 'Values of {{name}} variables.',
      type: 'object',
      additionalProperties: { description: 'Value of the variable.', type: 'string' },
    },
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
          retries: {
            description:
              'How many times the case runs again when an attempt fails (its steps come again with step.exec attempt 2, 3, ...). Absent: 0.',
            type: 'integer',
            minimum: 0,
            maximum: 3,
          },
        },
        required: ['id', 'title', 'steps'],
        additionalProperties: false,
      },
    },
    totalSteps: { description: 'Number of steps in the run.', type: 'integer', minimum: 0 },
    defaults: {
      description: 'Values used when a step does not set its own.',
      type: 'object',
      properties: {
        stepTimeoutMs: { description: 'Default step time-out, in milliseconds.', type: 'integer', minimum: 1 },
      },
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
    continueOnFail: {
      description: 'Whether the run goes on with the test case after this step fails.',
      type: 'boolean',
    },
    evidence: { description: 'When evidence is captured.', enum: [...EVIDENCE_MODES] },
    label: { description: 'Human-readable step label.', type: 'string' },
    step: { $ref: 'StepAction', description: 'The action, with {{name}} variables filled.' },
    attempt: {
      description:
        "The attempt of the step's test case, from 2 on: the case failed and runs again (POST /otp/runs retries). Absent on a first attempt. A step.exec of a step already performed in the same attempt is a resend (answer with the same result); in a new attempt, perform it again.",
      type: 'integer',
      minimum: 2,
    },
    freshContext: {
      description:
        'The first step of a retried test case: start it in a fresh browser context (no cookies, storage or pages of the failed attempt).',
      const: true,
    },
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
    reason: {
      description: 'Why a cancelled or error run ended (absent for passed and failed).',
      type: 'string',
      maxLength: 1000,
    },
    flaky: {
      description:
        'Test cases that failed and then passed on a retry (present when the run has retries); they do not fail the run.',
      type: 'integer',
      minimum: 0,
    },
    quarantined: {
      description:
        'Optional: the test cases quarantined when the run started. Their failed steps are in failed but did not fail the verdict (status).',
      type: 'array',
      items: { type: 'string' },
    },
  },
  required: ['runId', 'status', 'passed', 'failed', 'skipped', 'total', 'durationMs'],
  additionalProperties: false,
} as const satisfies JsonSchema;

export const recordingPayload = (description: string) =>
  ({
    description,
    type: 'object',
    properties: { recordingId: { description: 'Recording id.', type: 'string', minLength: 1, maxLength: 100 } },
    required: ['recordingId'],
    additionalProperties: false,
  }) as const;

/** record.start from the service: the recording to make (answering the executor's own record.start, or asked over REST). */
export const recordStartPayload = {
  description: 'The recording to start; events go to it until record.stop.',
  type: 'object',
  properties: {
    recordingId: { description: 'Recording id, prefix rec_.', type: 'string', minLength: 1, maxLength: 100 },
    title: { description: 'Title the recording (and its test case) will have.', type: 'string', maxLength: 300 },
    url: {
      description: 'Page to open first, when the recording was asked for with one.',
      type: 'string',
      maxLength: 2000,
    },
  },
  required: ['recordingId'],
  additionalProperties: false,
} as const;

/** record.stop from the service: the recording is over; its test case when one was made. */
export const recordStopPayload = {
  description: 'The recording that stopped, and the test case made from it.',
  type: 'object',
  properties: {
    recordingId: { description: 'Recording id, prefix rec_.', type: 'string', minLength: 1, maxLength: 100 },
    testCaseId: {
      description: 'The test case made from its steps (absent when it recorded none).',
      type: 'string',
      maxLength: 100,
    },
    reason: { description: 'Why it stopped (who asked).', type: 'string', maxLength: 1000 },
  },
  required: ['recordingId'],
  additionalProperties: false,
} as const;

/** record.start from the executor: it asks to record (the service answers with its own record.start). */
export const recordRequestPayload = {
  description: 'What to record; both optional.',
  type: 'object',
  properties: {
    title: {
      description: 'Title of the recording and of the test case it becomes.',
      type: 'string',
      minLength: 1,
      maxLength: 300,
    },
    url: { description: 'The start page (kept with the recording).', type: 'string', maxLength: 2000 },
  },
  additionalProperties: false,
} as const;
