// Schemas of the flakiness routes: GET /ai/flaky and the quarantine of a test case.
import type { BodyOf, QueryOf } from '../../rest/route.js';
import { registerSchema } from '../../rest/schemas.js';

const outcome = {
  enum: ['pass', 'fail', 'flaky'],
  description: 'The case in that run: passed, failed, or passed only on retry',
} as const;

export const flakyQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    runs: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 300,
      description: "The window: the project's latest finished runs to read",
    },
    status: { enum: ['flaky', 'broken', 'stable', 'insufficient'], description: 'Only the cases of this status' },
    testCaseId: { type: 'string', maxLength: 100, description: 'Only this test case' },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;
export type FlakyQuery = QueryOf<typeof flakyQuery>;

const QuarantineProperties = {
  testCaseId: { type: 'string' },
  reason: { type: ['string', 'null'] },
  createdBy: { type: 'string', description: 'The key that quarantined it' },
  createdAt: { type: 'string', format: 'date-time' },
  renewedAt: { type: 'string', format: 'date-time' },
  expiresAt: { type: 'string', format: 'date-time', description: 'When it ends unless renewed (POST again)' },
} as const;

export const QuarantineSchema = registerSchema({
  $id: 'Quarantine',
  title: 'Quarantine',
  description: 'A quarantined test case: it still runs and reports, but its failure does not fail the run',
  type: 'object',
  additionalProperties: false,
  required: Object.keys(QuarantineProperties),
  properties: {
    ...QuarantineProperties,
    renewed: { type: 'boolean', description: 'An existing quarantine was renewed' },
  },
});

const quarantineCreate = {
  $id: 'QuarantineCreate',
  title: 'QuarantineCreate',
  type: 'object',
  additionalProperties: false,
  properties: {
    days: {
      type: 'integer',
      minimum: 1,
      maximum: 90,
      description: 'How long it lasts (the configured AI_QUARANTINE_DAYS when absent)',
    },
    reason: { type: 'string', minLength: 1, maxLength: 2000 },
  },
} as const;
export const QuarantineCreateSchema = registerSchema(quarantineCreate);
export type QuarantineCreate = BodyOf<typeof quarantineCreate>;

const lastRun = {
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'createdAt', 'outcome', 'version'],
  properties: {
    runId: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    outcome,
    version: { type: ['integer', 'null'] },
    failedPositions: { type: 'array', items: { type: 'integer' } },
  },
} as const;

export const FlakyCaseSchema = registerSchema({
  $id: 'FlakyCase',
  title: 'FlakyCase',
  description: 'A test case ranked by its flakiness over the window, with the reasons and the runs that show it',
  type: 'object',
  additionalProperties: false,
  required: [
    'testCaseId',
    'status',
    'score',
    'runs',
    'failures',
    'retryPasses',
    'flips',
    'flipRate',
    'reasons',
    'evidenceRuns',
    'steps',
    'lastRuns',
    'quarantine',
  ],
  properties: {
    testCaseId: { type: 'string' },
    status: { enum: ['flaky', 'broken', 'stable', 'insufficient'] },
    score: { type: 'number', minimum: 0, maximum: 1 },
    runs: { type: 'integer', description: 'Runs of the case in the window' },
    failures: { type: 'integer' },
    retryPasses: { type: 'integer', description: 'Runs that passed it only on retry' },
    flips: { type: 'integer', description: 'Outcome changes between consecutive runs of the same version' },
    flipRate: { type: 'number' },
    reasons: { type: 'array', items: { type: 'string' }, description: 'Why it has this status, in words' },
    evidenceRuns: {
      type: 'array',
      items: lastRun,
      description: 'The runs that show it (passed on retry, outcome flipped), newest first',
    },
    steps: {
      type: 'array',
      description: 'Its steps that failed in the window (position in the test case, 0-based), most often first',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['position', 'failures'],
        properties: { position: { type: 'integer' }, failures: { type: 'integer' } },
      },
    },
    lastRuns: { type: 'array', items: lastRun, description: 'Its last runs, newest first' },
    quarantine: { oneOf: [{ $ref: 'Quarantine' }, { type: 'null' }], description: 'Its live quarantine' },
  },
});

export const FlakyPageSchema = registerSchema({
  $id: 'FlakyPage',
  title: 'FlakyPage',
  type: 'object',
  additionalProperties: false,
  required: ['items', 'window', 'rules'],
  properties: {
    items: { type: 'array', items: { $ref: 'FlakyCase' } },
    window: {
      type: 'object',
      additionalProperties: false,
      required: ['runs'],
      properties: { runs: { type: 'integer' } },
    },
    rules: {
      type: 'object',
      description:
        'The thresholds that decided: minimum runs for a rate, the runs the rate is over, flag and clear rates, the failure rate of a broken case',
      additionalProperties: { type: 'number' },
    },
  },
});
