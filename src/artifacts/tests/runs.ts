import type { Knex } from 'knex';
import { EventType } from '../../db/change-events.js';
import { IdPrefix } from '../../ids.js';
import type { Rec } from '../../rest/resource/definition.js';
import { assignee, dateTime, labels, ref, refs, stampWhen, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';
import { RESULT_STATUSES } from './run-results.js';

const SUMMARY_KEYS = ['total', 'untested', ...RESULT_STATUSES] as const;

/**
 * Where a test run stands: each test case counts once, by its latest result in this run; cases of
 * the run without a result are untested.
 */
async function summarise(db: Knex, projectId: string, records: Rec[]): Promise<void> {
  const { rows } = await db.raw(
    `SELECT DISTINCT ON (data->>'testRunId', data->>'testCaseId')
            data->>'testRunId' AS run, data->>'testCaseId' AS case, data->>'status' AS status
       FROM artifacts
      WHERE project_id = ? AND kind = 'test_result' AND data->>'testRunId' = ANY(?)
      ORDER BY data->>'testRunId', data->>'testCaseId', created_at DESC, id DESC`,
    [projectId, records.map((r) => r.id)],
  );
  const latest = new Map<string, Map<string, string>>();
  for (const row of rows) {
    const perRun = latest.get(row.run) ?? new Map<string, string>();
    perRun.set(row.case, row.status);
    latest.set(row.run, perRun);
  }
  for (const record of records) {
    const perRun = latest.get(record.id) ?? new Map<string, string>();
    const cases = new Set<string>([...((record.testCaseIds as string[] | undefined) ?? []), ...perRun.keys()]);
    const summary: Record<string, number> = Object.fromEntries(SUMMARY_KEYS.map((k) => [k, 0]));
    summary.total = cases.size;
    for (const id of cases) {
      const s = perRun.get(id);
      summary[s ?? 'untested'] += 1;
    }
    record.summary = summary;
  }
}

export const testRuns = defineArtifact({
  path: 'tests/runs',
  kind: 'test_run',
  schemaName: 'TestRun',
  pluralName: 'TestRuns',
  label: 'test run',
  idPrefix: IdPrefix.testRun,
  description:
    'A round of testing for a release or milestone: the test cases it groups and one result per case per execution (tests/results). Give its id as testRunId to POST /otp/runs to record results automatically; finishTestRun closes it. A closed run takes no more results.',
  fields: {
    title: title('Name of the round, e.g. "2.3.0 regression"'),
    description: text('What the round is for', 20_000),
    status: status(['open', 'closed'], 'open', 'open while results come in; closed freezes its results'),
    releaseId: ref([IdPrefix.release], 'The release tested'),
    milestoneId: ref([IdPrefix.milestone], 'The milestone tested'),
    planId: ref([IdPrefix.testPlan], 'The plan it follows; its test cases are copied in when testCaseIds is not given'),
    testCaseIds: refs([IdPrefix.testCase], 'The test cases the run is meant to cover'),
    environment: text('Where it runs: URL, browser, device', 300),
    build: text('The build or commit under test', 100),
    assignee: { ...assignee, description: 'Who runs it' },
    labels,
  },
  required: ['title'],
  computed: {
    closedAt: { ...dateTime('When it was closed'), readOnly: true },
    summary: {
      type: 'object',
      readOnly: true,
      additionalProperties: false,
      required: [...SUMMARY_KEYS],
      description: 'Test cases by their latest result in this run (computed on read)',
      properties: Object.fromEntries(SUMMARY_KEYS.map((k) => [k, { type: 'integer', minimum: 0 }])),
    },
  },
  refs: { releaseId: ['release'], milestoneId: ['milestone'], planId: ['test_plan'], testCaseIds: ['test_case'] },
  filters: ['status', 'releaseId', 'milestoneId', 'planId', 'assignee', 'labels'],
  hooks: {
    prepare: async (ctx) => {
      stampWhen('status', ['closed'], 'closedAt')(ctx);
      const { next, op, db, principal } = ctx;
      if (op === 'create' && next.planId && next.testCaseIds === undefined) {
        const plan = await db('artifacts')
          .where({ id: next.planId, project_id: principal.projectId, kind: 'test_plan' })
          .first('data');
        next.testCaseIds = plan?.data.testCaseIds ?? [];
      }
    },
    // Results belong to their run: they go with it.
    beforeDelete: async ({ db, principal, prev }) => {
      await db('artifacts')
        .where({ project_id: principal.projectId, kind: 'test_result' })
        .whereRaw(`data->>'testRunId' = ?`, [prev.id])
        .delete();
    },
    decorate: summarise,
    events: ({ op, record, prev }) =>
      op === 'updated' && record.status === 'closed' && prev?.data.status !== 'closed' ? [EventType.testRunClosed] : [],
  },
});
