// What a door asks for when it starts a run, and what it may filter a list of runs by: one schema
// each, registered once for validation, /openapi.json and the MCP tool's input.

import { RUN_STATUSES } from '../../../machines/types.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import { registerSchema } from '../../validation/schema-registry.js';
import type { BodyOf } from '../../validation/schema-types.js';

const runRequestSchema = {
  type: 'object',
  additionalProperties: false,
  // What runs: the test cases, or a plan; never both, never neither.
  oneOf: [{ required: ['testCaseIds'] }, { required: ['planId'] }],
  properties: {
    testCaseIds: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: { type: 'string', pattern: '^tc_' },
      description: 'Test cases to run, in order (give this or planId)',
    },
    planId: {
      type: 'string',
      pattern: '^tp_',
      description: 'A test plan whose cases run in order (give this or testCaseIds)',
    },
    projectId: { type: 'string', pattern: '^prj_', description: "Must be the key's project when given" },
    sessionId: {
      type: 'string',
      pattern: '^ots_',
      description: 'Run on this executor session; otherwise any ready session of the project',
    },
    vars: {
      type: 'object',
      maxProperties: 500,
      additionalProperties: { type: 'string', maxLength: 100000 },
      description: 'Values for {{name}} variables in the steps; every variable the steps use must be given',
    },
    allowedOrigins: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', maxLength: 2000 },
      description: 'Origins the executor may navigate to; by default the origins of the navigate steps',
    },
    testRunId: {
      type: 'string',
      pattern: '^tr_',
      maxLength: 100,
      description: 'An open test run of the project: when the run finishes, one result per test case is recorded in it',
    },
    finishTestRun: { type: 'boolean', description: 'Close the test run when this OTP run finishes (needs testRunId)' },
    group: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description:
        'Its queue group (a pipeline, a branch, "nightly", a person): executor time is shared fairly between groups (docs/queues.md). Default: the credential that posts it',
    },
    priority: {
      enum: ['gate', 'normal', 'batch'],
      description:
        'Its class in the queue (default normal): gate runs take the next free slot, batch runs wait for the others; a waiting run rises a class with time (docs/queues.md)',
    },
    cancelInProgress: {
      type: 'boolean',
      description: "Cancel the group's earlier queued runs, each then naming this run in supersededBy",
    },
    cancelRunning: {
      type: 'boolean',
      description: "With cancelInProgress: cancel the group's earlier running runs too",
    },
    retries: {
      type: 'integer',
      minimum: 0,
      maximum: 3,
      description:
        "How many times a test case whose steps fail runs again, from its first step, in a fresh browser context (default: the plan's retries, else 0). A case that fails and then passes is flaky: it does not fail the run",
    },
  },
} as const;

/** A run request as every door takes it (planner.ts checks what a schema cannot). */
export type RunRequest = BodyOf<typeof runRequestSchema>;

export const RunRequestSchema = registerSchema({
  ...runRequestSchema,
  $id: 'OtpRunRequest',
  title: 'OtpRunRequest',
  description: 'A run of test cases (testCaseIds) or of a plan (planId): give exactly one',
});

/** The filters and paging of a list of runs (GET /otp/runs). */
export const runsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { enum: [...RUN_STATUSES] },
    testCaseId: {
      type: 'string',
      pattern: '^tc_',
      maxLength: 100,
      description: 'Only runs that include this test case',
    },
  },
} as const;
