// The ai/* group's schemas, each written once: it validates the request, describes /openapi.json
// (tag `ai`) and is the MCP tools' input.
import { pageQueryProperties } from '../rest/pagination.js';
import type { BodyOf } from '../rest/route.js';
import { pageSchema, registerSchema } from '../rest/schemas.js';

export const TRIAGE_CATEGORIES = [
  'product_regression',
  'locator_drift',
  'environment',
  'flaky',
  'known_issue',
] as const;
export type TriageCategory = (typeof TRIAGE_CATEGORIES)[number];

export const SUGGESTED_ACTIONS = [
  'file_bug',
  'accept_healing',
  'update_test',
  're_run',
  'quarantine',
  'follow_bug',
  're_run_with_retries',
  'reopen_bug',
] as const;
export type SuggestedAction = (typeof SUGGESTED_ACTIONS)[number];

const signature = {
  type: 'string',
  pattern: '^sig_[0-9a-f]{20}$',
  description: 'A failure signature (sig_ and 20 hex digits)',
} as const;
const category = {
  enum: [...TRIAGE_CATEGORIES],
  description:
    'product_regression, locator_drift, environment (time-outs, blocked navigation, a lost executor, unreachable pages, 5xx/429 and gateway or proxy error pages), flaky or known_issue',
} as const;
const when = { type: 'string', format: 'date-time' } as const;

export const failuresQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    since: { ...when, description: 'Start of the window (default: 30 days ago)' },
    until: { ...when, description: 'End of the window, exclusive (default: now)' },
    testCaseId: { type: 'string', maxLength: 100, description: 'Only failures of this test case' },
    planId: { type: 'string', maxLength: 100, description: 'Only failures of runs of this plan' },
    status: {
      enum: ['all', 'new', 'recurring'],
      default: 'all',
      description: 'new: first seen in the window; recurring: seen before it',
    },
  },
} as const;

const LinkedBugSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'title', 'status'],
  properties: {
    id: { type: 'string', description: 'The bug (bug_...)' },
    title: { type: ['string', 'null'] },
    status: { type: ['string', 'null'], description: 'open, in_progress, resolved, ...' },
    via: {
      enum: ['signature', 'result', 'case'],
      description:
        'How it is tied to the failure (triage): filed for the signature, linked to a test result that failed the same way, or linked to the test case',
    },
    how: { type: 'string', description: 'The link in words (triage)' },
  },
} as const;

export const FailureClusterSchema = registerSchema({
  $id: 'FailureCluster',
  title: 'FailureCluster',
  description:
    'Failed steps of one cause: the same signature (error code, action, locator, normalised message) across runs and cases',
  type: 'object',
  additionalProperties: false,
  required: [
    'signature',
    'code',
    'action',
    'locator',
    'message',
    'status',
    'firstSeen',
    'lastSeen',
    'count',
    'runs',
    'cases',
    'example',
    'bugs',
  ],
  properties: {
    signature,
    code: { type: 'string', description: 'Error code of the steps (E_ASSERT_FAILED, ...)' },
    action: { type: 'string', description: 'Their action (assert:text for an assert of kind text)' },
    locator: { type: 'string', description: "Their locator's identity ('' when the action has none)" },
    message: { type: 'string', description: 'The message with its volatile parts replaced (<n>, <id>, "<v>", ...)' },
    status: { enum: ['new', 'recurring'], description: 'new: first seen inside the window' },
    firstSeen: { ...when, description: 'First seen in the project, ever' },
    lastSeen: { ...when, description: 'Last seen inside the window' },
    count: { type: 'integer', minimum: 1, description: 'Failed steps inside the window' },
    runs: { type: 'integer', minimum: 1, description: 'Runs affected inside the window' },
    cases: { type: 'integer', minimum: 1, description: 'Test cases affected inside the window' },
    example: {
      type: 'object',
      additionalProperties: false,
      required: ['runId', 'stepIndex', 'testCaseId', 'message', 'occurredAt', 'screenshotUrl'],
      description: 'The newest failed step of the cluster inside the window',
      properties: {
        runId: { type: 'string' },
        stepIndex: { type: 'integer', minimum: 0 },
        position: {
          type: 'integer',
          minimum: 0,
          description:
            'Its place within its test case, 0-based (people read step position + 1); absent for failures signed before it was kept',
        },
        testCaseId: { type: 'string' },
        message: { type: 'string', description: 'Its message as the executor wrote it' },
        occurredAt: when,
        screenshotUrl: { type: ['string', 'null'], description: 'Download path of its screenshot, when it has one' },
      },
    },
    bugs: {
      type: 'array',
      items: LinkedBugSchema,
      description: 'Bugs filed for this signature (POST /ai/bugs/draft with save)',
    },
  },
});

export const FailureClusterPageSchema = pageSchema(
  'FailureClusterPage',
  FailureClusterSchema,
  'A page of failure clusters, newest first',
);

export const TriageSchema = registerSchema({
  $id: 'RunTriage',
  title: 'RunTriage',
  description:
    'Why the failed test cases of a run failed: one answer per failed case, each with the facts that led to it',
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'status', 'cases'],
  properties: {
    runId: { type: 'string' },
    status: { type: 'string', description: 'The run status' },
    cases: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'caseIndex',
          'testCaseId',
          'stepIndex',
          'signature',
          'category',
          'confidence',
          'decidedBy',
          'reasons',
          'similar',
          'suggestedAction',
        ],
        properties: {
          caseIndex: { type: 'integer', minimum: 0 },
          testCaseId: { type: 'string' },
          title: { type: ['string', 'null'], description: 'The test case title, as the run has it' },
          stepIndex: { type: 'integer', minimum: 0, description: 'Its first failed step' },
          signature,
          category,
          confidence: { type: 'number', minimum: 0, maximum: 1 },
          decidedBy: {
            enum: ['correction', 'rule', 'facts'],
            description: 'A correction by a person, a project rule, or the facts',
          },
          reasons: { type: 'array', items: { type: 'string' }, description: 'The facts that led there, in words' },
          similar: {
            type: 'array',
            description: 'Earlier failures with the same signature, newest first (at most 5)',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['runId', 'stepIndex', 'testCaseId', 'occurredAt'],
              properties: {
                runId: { type: 'string' },
                stepIndex: { type: 'integer' },
                testCaseId: { type: 'string' },
                occurredAt: when,
              },
            },
          },
          bugs: {
            type: 'array',
            items: LinkedBugSchema,
            description:
              'Bugs of the failure: filed for the signature, linked to a test result that failed the same way, or linked to the test case',
          },
          uncertain: {
            type: 'boolean',
            description: 'The confidence is under 0.6: alternatives names the two likeliest categories',
          },
          alternatives: {
            type: 'array',
            maxItems: 2,
            description: 'On an uncertain answer, the two likeliest categories with their reasons, the answer first',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['category', 'confidence', 'reasons'],
              properties: {
                category,
                confidence: { type: 'number', minimum: 0, maximum: 1 },
                reasons: { type: 'array', items: { type: 'string' } },
              },
            },
          },
          suggestedAction: {
            enum: [...SUGGESTED_ACTIONS],
            description:
              'file_bug (POST /ai/bugs/draft), accept_healing (GET /ai/healing), update_test (no candidate finds the element), re_run, quarantine (POST /ai/flaky/{testCaseId}/quarantine), follow_bug, re_run_with_retries (an uncertain answer on a case no run retried) or reopen_bug (a fixed bug of the same failure is back)',
          },
        },
      },
    },
  },
});

const correctionBody = {
  $id: 'TriageCorrectionCreate',
  title: 'TriageCorrectionCreate',
  description:
    'A person sets the category of a signature: it wins over rules and facts for that signature from then on',
  type: 'object',
  additionalProperties: false,
  required: ['signature', 'category'],
  properties: { signature, category, note: { type: 'string', maxLength: 2000, description: 'Why' } },
} as const;
export const CorrectionBodySchema = registerSchema(correctionBody);
export type CorrectionBody = BodyOf<typeof correctionBody>;

export const CorrectionSchema = registerSchema({
  $id: 'TriageCorrection',
  title: 'TriageCorrection',
  description: 'The category a person set for a signature',
  type: 'object',
  additionalProperties: false,
  required: ['signature', 'category', 'note', 'createdBy', 'createdAt', 'updatedAt'],
  properties: {
    signature,
    category,
    note: { type: ['string', 'null'] },
    createdBy: { type: ['string', 'null'] },
    createdAt: when,
    updatedAt: when,
  },
});

export const CorrectionPageSchema = pageSchema(
  'TriageCorrectionPage',
  CorrectionSchema,
  'A page of triage corrections',
);

const ruleFields = {
  field: {
    enum: ['signature', 'message'],
    default: 'message',
    description:
      'What the pattern is matched against: the signature, or the failure message (as the executor wrote it)',
  },
  pattern: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description:
      'Text to find, case-insensitive; * stands for any run of characters (`*ERR_CONNECTION_REFUSED*`, `sig_3f2a*`). Without a *, the text anywhere matches',
  },
  category,
  note: { type: 'string', maxLength: 2000, description: 'Why' },
} as const;

const ruleBody = {
  $id: 'TriageRuleCreate',
  title: 'TriageRuleCreate',
  description:
    'A project rule: failures whose signature or message matches the pattern get the category (the oldest matching rule wins; a correction wins over rules)',
  type: 'object',
  additionalProperties: false,
  required: ['pattern', 'category'],
  properties: ruleFields,
} as const;
export const RuleBodySchema = registerSchema(ruleBody);
export type RuleBody = BodyOf<typeof ruleBody>;

export const RuleSchema = registerSchema({
  $id: 'TriageRule',
  title: 'TriageRule',
  description: 'A project rule mapping a pattern on the signature or message to a category',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'field', 'pattern', 'category', 'note', 'createdBy', 'createdAt'],
  properties: {
    id: { type: 'string', pattern: '^air_' },
    ...ruleFields,
    note: { type: ['string', 'null'] },
    createdBy: { type: ['string', 'null'] },
    createdAt: when,
  },
});

export const RulePageSchema = pageSchema('TriageRulePage', RuleSchema, 'A page of triage rules, oldest first');

const bugDraftBody = {
  $id: 'BugDraftRequest',
  title: 'BugDraftRequest',
  description:
    'A failed step of a run to write a bug from; with save, the bug is created and linked (found_by) to what found it',
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'stepIndex'],
  properties: {
    runId: { type: 'string', pattern: '^otr_', description: 'The run (otr_...)' },
    stepIndex: { type: 'integer', minimum: 0, description: 'The failed step' },
    save: {
      type: 'boolean',
      default: false,
      description:
        'Create the bug (counts toward the artifact quota) and link it to the test result, else the test case',
    },
    severity: { enum: ['critical', 'major', 'minor', 'trivial'], default: 'major' },
  },
} as const;
export const BugDraftBodySchema = registerSchema(bugDraftBody);
export type BugDraftBody = BodyOf<typeof bugDraftBody>;

export const BugDraftSchema = registerSchema({
  $id: 'BugDraft',
  title: 'BugDraft',
  description: 'A bug written from a failed step: the fields of a bug, the evidence, and the bug when saved',
  type: 'object',
  additionalProperties: false,
  required: [
    'title',
    'stepsToReproduce',
    'expectedResult',
    'actualResult',
    'environment',
    'evidence',
    'signature',
    'runId',
    'stepIndex',
    'testCaseId',
  ],
  properties: {
    title: { type: 'string' },
    stepsToReproduce: {
      type: 'array',
      items: { type: 'string' },
      description: "The case's steps up to the failed one, as the console words them",
    },
    expectedResult: { type: 'string' },
    actualResult: { type: 'string' },
    environment: {
      type: 'string',
      description: 'Executor, browser and the names of the variables (never their values)',
    },
    evidence: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'url'],
        properties: { kind: { enum: ['screenshot', 'file', 'run', 'console'] }, url: { type: 'string' } },
      },
    },
    signature,
    runId: { type: 'string' },
    stepIndex: { type: 'integer' },
    testCaseId: { type: 'string' },
    bug: { type: 'object', description: 'The bug created (save: true), as GET /bugs/{id} answers it' },
  },
});
