// Coverage of a requirement or specification: the test cases that cover it, directly (`covers`) or
// through a specification that specifies it, each with its latest recorded result.

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import type { RouteDef } from '../rest/route.js';
import { registerSchema } from '../rest/schemas.js';
import type { ArtifactDefinition } from './kind.js';
import { isSuspect } from './readiness/rules.js';
import { capitalise } from './store.js';
import { RESULT_STATUSES } from './tests/run-results.js';

const latestResult = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['id', 'status', 'testRunId', 'otpRunId', 'executedAt', 'recordedAt'],
  description: 'The most recently recorded result of the case (any test run); null when it never ran',
  properties: {
    id: { type: 'string' },
    status: { enum: RESULT_STATUSES },
    testRunId: { type: 'string' },
    otpRunId: { type: ['string', 'null'] },
    executedAt: { type: ['string', 'null'] },
    recordedAt: { type: 'string', format: 'date-time' },
  },
};

const CoverageSchema = registerSchema({
  $id: 'Coverage',
  title: 'Coverage',
  description: 'Which test cases cover an artifact and how they last fared',
  type: 'object',
  additionalProperties: false,
  required: ['artifactId', 'kind', 'covered', 'testCases', 'summary'],
  properties: {
    artifactId: { type: 'string' },
    kind: { type: 'string' },
    covered: { type: 'boolean', description: 'At least one test case covers it' },
    testCases: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title', 'via', 'latestResult', 'suspect', 'linkIds'],
        properties: {
          id: { type: 'string' },
          suspect: {
            type: 'boolean',
            description:
              'The requirement changed (title, description or acceptance criteria) after this case last passed, and no one confirmed the link since: it is trusted again when the case runs or the link is confirmed (POST /requirements/{id}/links/{linkId}/confirm)',
          },
          linkIds: { type: 'array', items: { type: 'string' }, description: 'The covers links behind it' },
          title: { type: ['string', 'null'] },
          via: {
            type: 'array',
            items: { type: 'string' },
            description: 'What the case covers on the way: this artifact itself, or the specifications that specify it',
          },
          latestResult,
        },
      },
    },
    summary: {
      type: 'object',
      additionalProperties: false,
      required: ['testCases', 'untested', 'suspect', ...RESULT_STATUSES],
      description:
        'Test cases by the status of their latest result; suspect counts the suspect ones apart (they are also counted by status)',
      properties: Object.fromEntries(
        ['testCases', 'untested', 'suspect', ...RESULT_STATUSES].map((k) => [k, { type: 'integer', minimum: 0 }]),
      ),
    },
  },
});

/** The latest test result row of a case, as the query below reads it. */
interface LatestResultRow {
  id: string;
  created_at: Date;
  data: { status: string; testRunId: string; testCaseId: string; otpRunId?: string; executedAt?: string };
}

export async function coverageOf(db: Db, principal: Principal, def: ArtifactDefinition, id: string) {
  const target = await db('artifacts')
    .where({ id, project_id: principal.projectId, kind: def.kind })
    .first('id', 'kind', db.raw(`data->>'contentChangedAt' AS changed`));
  if (!target) throw errors.notFound(capitalise(def.label), id);
  // Specifications that specify this requirement also bring their covering cases.
  const via: string[] = [id];
  if (def.kind === 'requirement') {
    via.push(
      ...(await db('artifact_links as l')
        .join('artifacts as s', 's.id', 'l.from_id')
        .where({
          'l.to_id': id,
          'l.relation': 'specifies',
          's.kind': 'specification',
          'l.project_id': principal.projectId,
        })
        .pluck('s.id')),
    );
  }
  const covering: Array<{
    id: string;
    title: string | null;
    covered: string;
    link_id: string;
    confirmed_at: Date | null;
  }> = await db('artifact_links as l')
    .join('artifacts as c', 'c.id', 'l.from_id')
    .where({ 'l.relation': 'covers', 'c.kind': 'test_case', 'l.project_id': principal.projectId })
    .whereIn('l.to_id', via)
    .orderBy('c.id')
    .select('c.id', db.raw(`c.data->>'title' AS title`), 'l.to_id as covered', 'l.id as link_id', 'l.confirmed_at');
  const cases = new Map<
    string,
    { id: string; title: string | null; via: string[]; linkIds: string[]; confirmedAt: Date | null }
  >();
  for (const row of covering) {
    const entry = cases.get(row.id) ?? { id: row.id, title: row.title, via: [], linkIds: [], confirmedAt: null };
    entry.via.push(row.covered);
    entry.linkIds.push(row.link_id);
    // Confirmed when any of its links was (the latest confirmation counts).
    if (row.confirmed_at && (!entry.confirmedAt || row.confirmed_at > entry.confirmedAt))
      entry.confirmedAt = row.confirmed_at;
    cases.set(row.id, entry);
  }
  const caseIds = [...cases.keys()];
  const latest = new Map<string, LatestResultRow>();
  if (caseIds.length) {
    const { rows } = await db.raw(
      `SELECT DISTINCT ON (data->>'testCaseId') id, data, created_at
         FROM artifacts
        WHERE project_id = ? AND kind = 'test_result' AND data->>'testCaseId' = ANY(?)
        ORDER BY data->>'testCaseId', created_at DESC, id DESC`,
      [principal.projectId, caseIds],
    );
    for (const row of rows) latest.set(row.data.testCaseId, row);
  }
  const summary: Record<string, number> = Object.fromEntries(
    ['testCases', 'untested', ...RESULT_STATUSES].map((k) => [k, 0]),
  );
  summary.testCases = caseIds.length;
  const testCases = [...cases.values()].map(({ confirmedAt, ...c }) => {
    const row = latest.get(c.id);
    const suspect = isSuspect(
      target.changed ?? null,
      row ? { status: row.data.status, recordedAt: row.created_at } : undefined,
      confirmedAt,
    );
    if (row) summary[row.data.status] = (summary[row.data.status] ?? 0) + 1;
    else summary.untested += 1;
    return {
      ...c,
      suspect,
      latestResult: row
        ? {
            id: row.id,
            status: row.data.status,
            testRunId: row.data.testRunId,
            otpRunId: row.data.otpRunId ?? null,
            executedAt: row.data.executedAt ?? null,
            recordedAt: row.created_at.toISOString(),
          }
        : null,
    };
  });
  summary.suspect = testCases.filter((c) => c.suspect).length;
  return { artifactId: id, kind: def.kind, covered: caseIds.length > 0, testCases, summary };
}

export function coverageRoute(def: ArtifactDefinition, db: Db): RouteDef {
  const { read } = def.scopes ?? { read: 'read' };
  return {
    method: 'get',
    path: `/${def.path}/:id/coverage`,
    auth: read,
    tag: def.path,
    operationId: `get${def.schemaName}Coverage`,
    summary: `Which test cases cover a ${def.label} (links "covers"${def.kind === 'requirement' ? ', also through specifications that specify it' : ''}) and their latest results`,
    response: CoverageSchema,
    handler: ({ principal, params }) => coverageOf(db, principal, def, params.id),
  };
}
