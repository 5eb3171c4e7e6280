// The shapes of what REST answers about runs and sessions (the views of run-views.ts), as JSON
// Schemas: the views' TypeScript types are derived from them (FromSchema), and the OTP routes register
// them for validation and /openapi.json (src/otp/http/schemas.ts), so a shape is written once.
import { CASE_OUTCOMES } from '../../../machines/case-outcome.js';
import { OBSERVED_TEXT_FIELDS, RUN_STATUSES } from '../../../machines/types.js';
import { EvidenceFileSchema } from '../../assets/evidence/schema.js';

const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

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
} as const;

/** What a run with its steps adds to each of its test cases (lists have no steps to judge them by). */
const caseOutcomeProperties = {
  outcome: {
    enum: [...CASE_OUTCOMES],
    description:
      "The case's outcome, from its last attempt's steps, as every report of the run and its test results say it (docs/decisions.md, \"A test case's outcome\"): pending while a step has none; else the first step that did not pass decides (failed: its check did not hold; error: it could not be performed, or the service could not run it; cancelled); else skipped when no step passed, passed, or flaky when it passed on a retry. With the run's steps only (GET /otp/runs/{id}, and the answers of POST /otp/runs and its cancel)",
  },
  failingStepIndex: {
    type: 'integer',
    minimum: 0,
    description: 'The stepIndex of the step that decided a failed, error or cancelled outcome',
  },
} as const;

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
} as const;

/** Every member of a run's summary is answered (null when it has no value). */
const summaryFields = Object.keys(runSummaryProperties) as Array<keyof typeof runSummaryProperties>;

/** Where a run stands in its project's queue (docs/queues.md); answered where the run's row was read whole. */
const queueProperties = {
  group: {
    type: 'string',
    description: 'Its queue group: the one asked for, else the credential that posted it (docs/queues.md)',
  },
  priority: { enum: ['gate', 'normal', 'batch'], description: 'Its priority class as posted' },
  supersededBy: {
    type: 'string',
    pattern: '^otr_',
    description: 'The run of the same group that cancelled it (cancelInProgress)',
  },
  queue: {
    type: 'object',
    additionalProperties: false,
    required: ['position', 'estimatedStart'],
    description: 'Only while it is queued: where it stands (docs/queues.md, "Position and estimated start")',
    properties: {
      position: {
        type: 'integer',
        minimum: 0,
        description: 'Runs that start before it; it rises only when a run of a better class is posted',
      },
      estimatedStart: {
        type: ['object', 'null'],
        additionalProperties: false,
        required: ['from', 'to'],
        description: 'When it should start, as a range; null while the project has no open session or no finished run',
        properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
      },
    },
  },
} as const;

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
        navigations: {
          type: 'array',
          description:
            "The main document's navigations during the step as the executor reported them: the HTTP status of each, or why it got none (triage reads 5xx, 429 and unreachable pages as the environment)",
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['url'],
            properties: {
              url: { type: 'string' },
              status: { type: 'integer' },
              statusText: { type: 'string' },
              error: { type: 'string' },
            },
          },
        },
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
} as const;

export const runSummarySchema = {
  $id: 'OtpRunSummary',
  title: 'OtpRunSummary',
  description: 'An OTP run without its steps',
  type: 'object',
  additionalProperties: false,
  required: summaryFields,
  properties: { ...runSummaryProperties, ...queueProperties },
} as const;

export const runSchema = {
  $id: 'OtpRun',
  title: 'OtpRun',
  description: 'An OTP run with its counts and every step (status, duration, error, evidence, usedLocator, actual)',
  type: 'object',
  additionalProperties: false,
  required: [...summaryFields, 'steps'],
  properties: {
    ...runSummaryProperties,
    ...queueProperties,
    testCases: {
      ...runSummaryProperties.testCases,
      items: {
        ...runSummaryProperties.testCases.items,
        properties: { ...runSummaryProperties.testCases.items.properties, ...caseOutcomeProperties },
      },
    },
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
} as const;

export const sessionSchema = {
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
} as const;
