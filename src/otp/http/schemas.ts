// Schemas of what the OTP REST routes answer (the views in run-views.ts), for /openapi.json.

import { RUN_STATUSES } from '../../../machines/types.js';
import { EvidenceFileSchema } from '../../assets/evidence/schema.js';
import { pageSchema, registerSchema } from '../../rest/schemas.js';
import { OBSERVED_TEXT_FIELDS } from '../protocol/observed-text.js';

// Registered there, as the run commands' own; re-exported for the routes (and registered at this point of /openapi.json).
export { RunRequestSchema } from '../runs/request.js';

const nullableTime = { type: ['string', 'null'], format: 'date-time' };

export const ProtocolSchema = registerSchema({
  $id: 'OtpProtocol',
  title: 'OtpProtocol',
  description: 'Protocol version and limits',
  type: 'object',
  additionalProperties: false,
  required: [
    'version',
    'websocketPath',
    'keepaliveSec',
    'maxSteps',
    'stepTimeoutMs',
    'maxFrameBytes',
    'pongTimeoutMs',
    'helloTimeoutMs',
    'resumeWindowMs',
  ],
  properties: {
    version: { type: 'string', description: 'OTP version carried in the envelope field otp' },
    websocketPath: { type: 'string', description: 'Path of the WebSocket endpoint on {ws_url}' },
    keepaliveSec: { type: 'integer', description: 'The service pings every this many seconds' },
    maxSteps: { type: 'integer', description: 'Most steps in one run' },
    stepTimeoutMs: { type: 'integer', description: 'Default time allowed per step' },
    maxFrameBytes: { type: 'integer', description: 'Largest frame' },
    pongTimeoutMs: { type: 'integer', description: 'A pong must come within this time' },
    helloTimeoutMs: { type: 'integer', description: 'hello must come within this time of connecting' },
    otpUrl: {
      type: 'string',
      description:
        'The WebSocket address of OTP as clients reach it: OTP_PUBLIC_URL when set (a service behind a proxy), else ws://{the host this request was sent to}:{the WebSocket port}/otp. Absent only while the WebSocket listener is not bound yet',
    },
    resumeWindowMs: {
      type: 'integer',
      description:
        'A session whose connection dropped may be resumed (hello.resumeSessionId) within this time; 0: sessions are not resumed',
    },
  },
});

const counts = {
  type: 'object',
  additionalProperties: false,
  required: ['passed', 'failed', 'skipped', 'total'],
  properties: {
    passed: { type: 'integer' },
    failed: {
      type: 'integer',
      description:
        'Steps that failed or errored (a time-out is an error); of a retried test case, its last attempt counts',
    },
    skipped: { type: 'integer' },
    total: { type: 'integer' },
    flaky: {
      type: 'integer',
      description:
        'Test cases that failed and then passed on a retry (runs with retries only); they do not fail the run',
    },
  },
};

const runSummaryProperties = {
  id: { type: 'string', pattern: '^otr_' },
  runId: { type: 'string', pattern: '^otr_', description: 'Same as id' },
  projectId: { type: 'string' },
  status: { enum: [...RUN_STATUSES], description: 'queued → running → passed, failed, cancelled or error' },
  sessionId: { type: ['string', 'null'], description: 'The executor session that holds the run' },
  requestedSessionId: { type: ['string', 'null'], description: 'The session asked for (null: any ready session)' },
  planId: { type: ['string', 'null'] },
  testRunId: { type: ['string', 'null'], description: 'The test run its results go to' },
  finishTestRun: { type: 'boolean' },
  testCases: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'title', 'steps'],
      properties: {
        id: { type: 'string' },
        title: { type: 'string' },
        steps: { type: 'integer', description: 'Number of steps' },
        retries: {
          type: 'integer',
          minimum: 1,
          maximum: 3,
          description: 'How many times the case may run again after a failed attempt (absent: none)',
        },
        version: { type: 'integer', description: 'The version of the test case that ran' },
        quarantined: {
          const: true,
          description:
            'The case was quarantined when the run started (POST /ai/flaky/{testCaseId}/quarantine): it ran and reports, but its failure does not fail the verdict',
        },
      },
    },
  },
  allowedOrigins: { type: 'array', items: { type: 'string' } },
  varNames: {
    type: 'array',
    items: { type: 'string' },
    description: 'Names of the variables given (values are not answered)',
  },
  totalSteps: { type: 'integer' },
  counts,
  reason: { type: ['string', 'null'], description: 'Why a run was cancelled or ended in error' },
  cancelRequested: { type: 'boolean' },
  createdAt: { type: 'string', format: 'date-time' },
  startedAt: nullableTime,
  finishedAt: nullableTime,
  durationMs: { type: ['integer', 'null'] },
};

const stepView = {
  type: 'object',
  additionalProperties: false,
  required: [
    'stepIndex',
    'caseIndex',
    'testCaseId',
    'label',
    'action',
    'status',
    'source',
    'durationMs',
    'error',
    'evidence',
    'actual',
    'usedLocator',
    'textReplaced',
    'finishedAt',
    'attempt',
  ],
  properties: {
    stepIndex: { type: 'integer' },
    attempt: {
      type: 'integer',
      minimum: 1,
      description:
        'The attempt of its test case this outcome belongs to (1; 2 and on after a retry: POST /otp/runs retries)',
    },
    caseIndex: { type: 'integer', description: 'Position of its test case in the run' },
    testCaseId: { type: 'string' },
    label: { type: ['string', 'null'] },
    action: { $ref: 'StepAction' },
    status: { enum: ['pending', 'pass', 'fail', 'skip', 'error'] },
    source: { enum: ['executor', 'service', null], description: 'Who decided the outcome' },
    durationMs: { type: ['integer', 'null'] },
    error: {
      type: ['object', 'null'],
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, triedLocators: { type: 'array' } },
    },
    evidence: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        screenshotAssetId: { type: 'string', description: 'Evidence of this run the executor named in step.result' },
        screenshotUrl: {
          type: 'string',
          description: 'Path on this service that answers a signed link to the screenshot (302)',
        },
        consoleErrors: { type: 'array', items: { type: 'string' } },
        note: { type: 'string', description: 'Why a screenshotAssetId given by the executor was not recorded' },
        files: {
          type: 'array',
          items: EvidenceFileSchema,
          description: 'Evidence uploaded for this step (POST /api/v1/otp/evidence)',
        },
      },
    },
    actual: { type: ['string', 'null'] },
    usedLocator: { type: ['object', 'null'], description: 'The locator that matched (a Locator)' },
    triedLocators: {
      type: 'array',
      items: { type: 'object' },
      description:
        'Only on a step that passed through a candidate other than its first: the candidates tried, each with count (and visible, enabled for one match), as the executor reported them',
    },
    textReplaced: {
      type: ['array', 'null'],
      items: { enum: [...OBSERVED_TEXT_FIELDS] },
      description:
        'Fields of text observed on the page (actual, error.message, evidence.consoleErrors) stored with U+FFFD in place of NUL characters and lone UTF-16 surrogates, which cannot be stored; null when none was replaced. The verdict is as the executor sent it.',
    },
    finishedAt: nullableTime,
  },
};

export const RunSummarySchema = registerSchema({
  $id: 'OtpRunSummary',
  title: 'OtpRunSummary',
  description: 'An OTP run without its steps',
  type: 'object',
  additionalProperties: false,
  required: Object.keys(runSummaryProperties),
  properties: runSummaryProperties,
});

export const RunSchema = registerSchema({
  $id: 'OtpRun',
  title: 'OtpRun',
  description: 'An OTP run with its counts and every step (status, duration, error, evidence, usedLocator, actual)',
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(runSummaryProperties), 'steps'],
  properties: {
    ...runSummaryProperties,
    steps: {
      type: 'array',
      items: stepView,
      description: "Every step, with the outcome of its test case's last attempt",
    },
    earlierAttempts: {
      type: 'array',
      description:
        'Outcomes of the attempts before the last, of test cases that ran again (runs with retries only), by step and attempt',
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'stepIndex',
          'caseIndex',
          'testCaseId',
          'attempt',
          'status',
          'source',
          'durationMs',
          'error',
          'evidence',
          'actual',
          'usedLocator',
          'finishedAt',
        ],
        properties: {
          stepIndex: { type: 'integer' },
          caseIndex: { type: 'integer' },
          testCaseId: { type: 'string' },
          attempt: { type: 'integer', minimum: 1 },
          status: { enum: ['pass', 'fail', 'skip', 'error'] },
          source: stepView.properties.source,
          durationMs: { type: ['integer', 'null'] },
          error: stepView.properties.error,
          evidence: { type: ['object', 'null'] },
          actual: { type: ['string', 'null'] },
          usedLocator: { type: ['object', 'null'] },
          finishedAt: nullableTime,
        },
      },
    },
  },
});

export const RunPageSchema = pageSchema('OtpRunPage', RunSummarySchema, 'A page of OTP runs');

export const SessionSchema = registerSchema({
  $id: 'OtpSession',
  title: 'OtpSession',
  description: 'An executor session',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'sessionId',
    'projectId',
    'executor',
    'name',
    'version',
    'capabilities',
    'maxParallel',
    'status',
    'activeRuns',
    'connectedAt',
    'closedAt',
    'closeCode',
    'closeReason',
  ],
  properties: {
    id: { type: 'string', pattern: '^ots_' },
    sessionId: { type: 'string', pattern: '^ots_', description: 'Same as id' },
    projectId: { type: 'string' },
    executor: { type: 'string' },
    name: { type: ['string', 'null'] },
    version: { type: ['string', 'null'], description: "The executor's version (from hello)" },
    capabilities: { $ref: 'Capabilities' },
    maxParallel: { type: 'integer' },
    status: { enum: ['open', 'closed'] },
    activeRuns: { type: 'integer' },
    connectedAt: { type: 'string', format: 'date-time' },
    closedAt: nullableTime,
    closeCode: { type: ['integer', 'null'] },
    closeReason: { type: ['string', 'null'] },
  },
});

export const SessionPageSchema = pageSchema('OtpSessionPage', SessionSchema, 'A page of executor sessions');

export const RunTraceSchema = registerSchema({
  $id: 'OtpRunTrace',
  title: 'OtpRunTrace',
  description:
    "The run machine's transitions, oldest first: the last 500 are kept with the run (older ones are counted in dropped)",
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'status', 'transitions', 'dropped', 'live'],
  properties: {
    runId: { type: 'string', pattern: '^otr_' },
    status: { enum: [...RUN_STATUSES] },
    transitions: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['at', 'event', 'from', 'to'],
        properties: {
          at: { type: 'string', format: 'date-time' },
          event: {
            type: 'string',
            description:
              'The event; `always` for an eventless transition, `after <delay>` for a delayed one, `xstate.init` for the start',
          },
          from: { type: ['string', 'null'], description: 'The state left (dotted path); null for the start' },
          to: { type: 'string', description: 'The state entered (dotted path)' },
          cursor: {
            type: 'integer',
            minimum: 0,
            description:
              "The run's cursor after the transition: the stepIndex of the step.exec sent on entering `running`, else of the next step to send; every step before it has its outcome. Absent from traces written before it was recorded",
          },
        },
      },
    },
    dropped: { type: 'integer', description: 'Older transitions no longer kept' },
    live: {
      type: 'boolean',
      description:
        'True: read from the process that drives the run; false: as last written (every OTP_TRACE_FLUSH_MS while it runs, and with its verdict)',
    },
  },
});

export const CtrfReportSchema = registerSchema({
  $id: 'CtrfReport',
  title: 'CtrfReport',
  description:
    'A run as a Common Test Report Format document (its own schema: the ctrf package, or ctrf.io): one test per test case',
  type: 'object',
  required: ['reportFormat', 'specVersion', 'results'],
  properties: {
    reportFormat: { const: 'CTRF' },
    specVersion: { type: 'string' },
    results: { type: 'object', required: ['tool', 'summary', 'tests'] },
  },
});
