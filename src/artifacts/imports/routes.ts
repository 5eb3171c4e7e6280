// POST /tests/runs/:id/results/import: a JUnit or CTRF report of tests run elsewhere becomes results
// of the test run (import-service.ts). The route reads its own body (rawBody), as a stream.

import type { RouteDef } from '../../rest/route.js';
import { registerSchema } from '../../rest/schemas.js';
import { readCtrf } from './ctrf-reader.js';
import type { ResultImporter } from './import-service.js';
import type { ImportedTest } from './imported-test.js';
import { readJunit } from './junit-reader.js';
import { openReportBody, textOf } from './report-body.js';

const count = { type: 'integer', minimum: 0 };

export const ImportSummarySchema = registerSchema({
  $id: 'TestResultImport',
  title: 'TestResultImport',
  description: 'What an import recorded: one result per test of the report, and how each test found its test case',
  type: 'object',
  additionalProperties: false,
  required: ['importId', 'testRunId', 'format', 'tests', 'results', 'matched', 'createdTestCaseIds'],
  properties: {
    importId: {
      type: 'string',
      pattern: '^imp_',
      description: 'Carried by every result it recorded (GET /tests/results?importId=...)',
    },
    testRunId: { type: 'string' },
    format: { enum: ['junit', 'ctrf'] },
    tests: { ...count, description: 'Tests read from the report' },
    results: {
      type: 'object',
      additionalProperties: false,
      required: ['created', 'passed', 'failed', 'error', 'skipped'],
      properties: { created: count, passed: count, failed: count, error: count, skipped: count },
    },
    matched: {
      type: 'object',
      additionalProperties: false,
      required: ['byId', 'byMapping', 'newDraft'],
      description:
        "byId: a test-case id (tc_...) in the test's name; byMapping: the case an earlier import (or this one, for a test listed twice) matched to the same test; newDraft: a new test case created as draft",
      properties: { byId: count, byMapping: count, newDraft: count },
    },
    createdTestCaseIds: { type: 'array', items: { type: 'string' } },
  },
});

const CTRF_BATCH = 500;

async function* ctrfBatches(chunks: AsyncIterable<Buffer>): AsyncGenerator<ImportedTest[]> {
  const tests = readCtrf(await textOf(chunks));
  for (let i = 0; i < tests.length; i += CTRF_BATCH) yield tests.slice(i, i + CTRF_BATCH);
}

export function importRoutes(importer: ResultImporter, maxBytes: number): RouteDef[] {
  return [
    {
      method: 'post',
      path: '/tests/runs/:id/results/import',
      auth: 'write',
      tag: 'tests/runs',
      status: 201,
      operationId: 'importTestResults',
      rawBody: true,
      errors: [402, 404, 409, 413, 415],
      summary:
        'Import a JUnit XML or CTRF report of tests run elsewhere: one result per test, each matched to a test case',
      description:
        'Each test is matched to a test case by a test-case id in its name (tc_...), else by the mapping an earlier import kept for the same test (its classname or file, and name), else a new test case is created as draft (label "imported") and mapped. ' +
        `JUnit streams (Playwright, Jest, pytest, Maven Surefire); CTRF is read whole. At most ${maxBytes} bytes (IMPORT_MAX_BYTES). ` +
        'A malformed report is refused with 400 naming its line and column (details.line, details.column), and nothing is recorded: the import is one transaction. A closed test run is 409.',
      bodyTypes: [
        {
          contentType: 'application/xml',
          schema: { type: 'string', description: 'A JUnit XML report (text/xml too)' },
          description: 'a JUnit XML report, read as a stream',
        },
        { contentType: 'application/json', schema: { $ref: 'CtrfReport' }, description: 'a CTRF report' },
        {
          contentType: 'multipart/form-data',
          schema: {
            type: 'object',
            required: ['file'],
            properties: {
              file: {
                type: 'string',
                format: 'binary',
                description: 'The report: its type (or its name, .xml or .json) says which',
              },
            },
          },
          description: 'either report as the part named "file" (curl -F file=@report.xml)',
        },
      ],
      response: ImportSummarySchema,
      handler: async ({ principal, params, koa }) => {
        try {
          await importer.checkRun(principal, params.id!);
          const body = await openReportBody(koa.req, maxBytes);
          const batches = body.format === 'junit' ? readJunit(body.chunks) : ctrfBatches(body.chunks);
          return await importer.importReport(principal, params.id!, body.format, batches);
        } finally {
          // What was not read (a refusal before the end) is drained, so the client reads the answer.
          koa.req.resume();
        }
      },
    },
  ];
}
