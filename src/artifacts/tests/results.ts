import type { Knex } from 'knex';
import { EventType } from '../../db/change-events.js';
import { errors } from '../../errors.js';
import { IdPrefix } from '../../ids.js';
import { dateTime, labels, person, ref, text } from '../fields.js';
import { defineArtifact } from '../kind.js';
import { RESULT_STATUSES } from './run-results.js';

/** A failing step of an OTP run, as its result keeps it (tests/run-results.ts, ResultFailure). */
const recordedFailure = {
  type: 'object',
  readOnly: true,
  additionalProperties: false,
  required: ['attempt', 'stepIndex', 'step', 'code', 'message'],
  properties: {
    attempt: { type: 'integer', minimum: 1, description: 'The attempt of the case (1 first)' },
    stepIndex: { type: 'integer', minimum: 0, description: "The step's index in the OTP run (0-based)" },
    step: {
      type: 'string',
      description: 'The step as people read it: "step 3 (stepIndex 7)", its number in the case from 1',
    },
    code: { type: 'string', description: 'Its error code (E_ASSERT_FAILED, E_TIMEOUT, ...)' },
    message: { type: 'string' },
  },
} as const;

/** Results of a closed test run are frozen: adding, changing or removing one is a 409. */
async function requireOpenRun(db: Knex, projectId: string, testRunId: string): Promise<void> {
  const run = await db('artifacts')
    .where({ id: testRunId, project_id: projectId, kind: 'test_run' })
    .forShare()
    .first('data');
  if (run?.data.status === 'closed') {
    throw errors.conflict(`Test run ${testRunId} is closed; reopen it (status open) to change its results`, {
      testRunId,
    });
  }
}

export const testResults = defineArtifact({
  path: 'tests/results',
  kind: 'test_result',
  schemaName: 'TestResult',
  pluralName: 'TestResults',
  label: 'test result',
  idPrefix: IdPrefix.testResult,
  description:
    'The outcome of one test case in one test run, by hand or recorded by an OTP run (one per case per OTP run). A case run again gets another result: the history of a case is its results, newest last by default (GET /tests/results?testCaseId=...).',
  fields: {
    testRunId: ref([IdPrefix.testRun], 'The test run it belongs to (must be open)'),
    testCaseId: ref([IdPrefix.testCase], 'The test case it is the outcome of'),
    status: { enum: RESULT_STATUSES, description: 'The outcome' },
    durationMs: { type: 'integer', minimum: 0, description: 'How long the case took' },
    comment: text('What the tester or the run has to say about it', 10_000),
    executedAt: dateTime('When it was executed (default: when recorded)'),
    executedBy: person('Who or what executed it (an OTP run records otp:<session id>)'),
    evidenceAssetIds: {
      type: 'array',
      maxItems: 100,
      uniqueItems: true,
      items: { type: 'string', pattern: '^ast_' },
      description: 'Assets that show the outcome (screenshots)',
    },
    labels,
  },
  required: ['testRunId', 'testCaseId', 'status'],
  immutable: ['testRunId', 'testCaseId'],
  computed: {
    otpRunId: {
      type: 'string',
      readOnly: true,
      description: 'The OTP run that recorded it (absent for results entered by hand)',
    },
    importId: {
      type: 'string',
      readOnly: true,
      description: 'The import that recorded it (POST /tests/runs/{id}/results/import), absent otherwise',
    },
    failure: {
      ...recordedFailure,
      description:
        'The step that decided a failed, error or cancelled result of an OTP run (absent for results entered by hand or imported)',
    },
    failedAttempts: {
      type: 'array',
      readOnly: true,
      items: recordedFailure,
      description:
        'The attempts of the case that failed before the last, oldest first (an OTP run with retries): a flaky result passed on the last',
    },
    stepCounts: {
      type: 'object',
      readOnly: true,
      additionalProperties: false,
      required: ['passed', 'failed', 'skipped', 'total'],
      description: 'Step outcomes of the OTP run for this case',
      properties: Object.fromEntries(
        ['passed', 'failed', 'skipped', 'total'].map((k) => [k, { type: 'integer', minimum: 0 }]),
      ),
    },
  },
  refs: { testRunId: ['test_run'], testCaseId: ['test_case'] },
  filters: ['testRunId', 'testCaseId', 'status', 'otpRunId', 'importId', 'executedBy', 'labels'],
  hooks: {
    prepare: async ({ db, principal, op, next, prev }) => {
      await requireOpenRun(db, principal.projectId, String((prev?.data ?? next).testRunId));
      if (op === 'create' && next.executedAt === undefined) next.executedAt = new Date().toISOString();
    },
    beforeDelete: ({ db, principal, prev }) => requireOpenRun(db, principal.projectId, String(prev.data.testRunId)),
    // A result entered by hand is recorded as much as one from an OTP run (tests/run-results.ts).
    events: ({ op }) => (op === 'created' ? [EventType.testResultRecorded] : []),
  },
});
