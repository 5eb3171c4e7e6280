// POST /tests/runs/:id/results/import: JUnit (Playwright, Jest, pytest, Surefire) and CTRF reports
// become results of a test run; each test matched by an id in its name, by the mapping an earlier import
// kept, or as a new draft case; a malformed file leaves nothing behind; a closed run refuses.

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

const fixture = (name: string) =>
  fs.readFileSync(path.join(import.meta.dirname, '..', 'reports', 'fixtures', name), 'utf8');
const PLACEHOLDER = 'tc_01jcheckoutpaysavedcard000';

describe('Importing results from JUnit and CTRF reports', () => {
  let t: TestService;
  let caseId: string;
  before(async () => {
    t = await startTestService();
    caseId = (await t.request('POST', '/tests/cases', { body: { title: 'Pay with a saved card', steps: [] } })).body.id;
  });
  after(async () => t?.stop());

  const newRun = async (title = 'imported round') =>
    (await t.request('POST', '/tests/runs', { body: { title } })).body.id as string;
  const importInto = (runId: string, body: string, type = 'application/xml', key?: string) =>
    t.request('POST', `/tests/runs/${runId}/results/import`, {
      body,
      headers: { 'content-type': type },
      ...(key ? { key } : {}),
    });
  /** What the project holds that an import writes. */
  const written = async () => {
    const [cases, results, mappings] = await Promise.all([
      t.service.db('artifacts').where({ kind: 'test_case' }).count({ n: '*' }).first(),
      t.service.db('artifacts').where({ kind: 'test_result' }).count({ n: '*' }).first(),
      t.service.db('test_case_mappings').count({ n: '*' }).first(),
    ]);
    return { cases: Number(cases!.n), results: Number(results!.n), mappings: Number(mappings!.n) };
  };

  it('imports a Playwright report: an id in a name matches, the others become draft cases, each test one result', async () => {
    const runId = await newRun();
    const res = await importInto(runId, fixture('playwright.xml').replace(PLACEHOLDER, caseId));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.deep.include({
      testRunId: runId,
      format: 'junit',
      tests: 4,
      matched: { byId: 1, byMapping: 0, newDraft: 3 },
    });
    expect(res.body.results).to.deep.equal({ created: 4, passed: 2, failed: 1, error: 0, skipped: 1 });
    const drafts = await Promise.all(
      res.body.createdTestCaseIds.map(async (id: string) => (await t.request('GET', `/tests/cases/${id}`)).body),
    );
    expect(drafts.map((d) => [d.title, d.status, d.labels])).to.deep.equal([
      ['checkout › shows the basket total', 'draft', ['imported']],
      ['checkout › applies a coupon', 'draft', ['imported']],
      ['checkout › retries the payment', 'draft', ['imported']],
    ]);
    const results = (await t.request('GET', `/tests/results?importId=${res.body.importId}&limit=10`)).body.items;
    const failed = results.find((r: any) => r.status === 'failed');
    expect(failed).to.include({
      testRunId: runId,
      testCaseId: drafts[0].id,
      durationMs: 1520,
      comment: 'checkout.spec.ts:24:5 shows the basket total',
      executedBy: 'import:junit',
    });
    expect(results.find((r: any) => r.testCaseId === caseId)).to.include({ status: 'passed', durationMs: 2113 });
    // The run counts them as any results.
    const run = (await t.request('GET', `/tests/runs/${runId}`)).body;
    expect(run.summary).to.include({ total: 4, passed: 2, failed: 1, skipped: 1 });

    // The same report again, into another run: the drafts are found by the mappings kept, none is created.
    const again = await importInto(await newRun(), fixture('playwright.xml').replace(PLACEHOLDER, caseId));
    expect(again.body.matched).to.deep.equal({ byId: 1, byMapping: 3, newDraft: 0 });
    expect(again.body.createdTestCaseIds).to.deep.equal([]);
  });

  it('imports Jest, pytest and Surefire reports, a CTRF report, and a report sent as a multipart file', async () => {
    const runId = await newRun();
    const jest = await importInto(runId, fixture('jest.xml'), 'text/xml');
    expect(jest.body.results).to.include({ created: 3, passed: 2, failed: 1 });
    const pytest = await importInto(runId, fixture('pytest.xml'), 'application/junit+xml');
    expect(pytest.body.results).to.deep.equal({ created: 4, passed: 1, failed: 1, error: 1, skipped: 1 });
    const surefire = await importInto(runId, fixture('surefire.xml'));
    expect(surefire.body.results).to.include({ passed: 2, error: 1 });
    const flaky = (await t.request('GET', `/tests/results?importId=${surefire.body.importId}&labels=flaky`)).body.items;
    expect(flaky).to.have.length(1);
    const ctrf = await importInto(runId, fixture('ctrf.json'), 'application/json');
    expect(ctrf.status).to.equal(201);
    expect(ctrf.body).to.deep.include({ format: 'ctrf', tests: 3, matched: { byId: 0, byMapping: 0, newDraft: 3 } });

    const form = new FormData();
    form.append('file', new Blob([fixture('jest.xml')]), 'junit.xml');
    const res = await fetch(`${t.api}/tests/runs/${runId}/results/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}` },
      body: form,
    });
    const body: any = await res.json();
    expect(res.status).to.equal(201);
    expect(body).to.deep.include({ format: 'junit', tests: 3, matched: { byId: 0, byMapping: 3, newDraft: 0 } });
  });

  it('refuses a report malformed on its last line with its line and column, and writes nothing of it', async () => {
    const runId = await newRun();
    const many = Array.from(
      { length: 1500 },
      (_, i) => `    <testcase classname="big.spec.ts" name="test ${i}" time="0.01"/>`,
    ).join('\n');
    // 1500 tests (three batches written inside the transaction), then a wrong closing tag.
    const text = `<testsuites>\n  <testsuite name="big">\n${many}\n  </testsuite>\n</testsuite>\n`;
    const before = await written();
    const res = await importInto(runId, text);
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details.line).to.equal(1504);
    expect(res.body.error.details.column).to.be.a('number');
    expect(res.body.error.message).to.match(/\(line 1504, column \d+\)$/);
    expect(await written()).to.deep.equal(before);
  });

  it('refuses a closed run (409), an unknown one (404), another type (415), a report past the limit (413), and keeps projects apart', async () => {
    const runId = await newRun();
    await t.request('PATCH', `/tests/runs/${runId}`, { body: { status: 'closed' } });
    expect((await importInto(runId, fixture('jest.xml'))).status).to.equal(409);
    expect((await importInto('tr_01jnotthere0000000000000000', fixture('jest.xml'))).status).to.equal(404);
    const open = await newRun();
    expect((await importInto(open, 'a,b\n1,2', 'text/csv')).status).to.equal(415);
    const other = await t.newProject('write');
    expect((await importInto(open, fixture('jest.xml'), 'application/xml', other.key)).status).to.equal(404);
    // A test case id of another project in a name is not matched: the test becomes a draft of this one.
    const theirCase = (
      await t.request('POST', '/tests/cases', { key: other.key, body: { title: 'theirs', steps: [] } })
    ).body.id;
    const theirRun = (await t.request('POST', '/tests/runs', { key: other.key, body: { title: 'theirs' } })).body.id;
    const mine = await importInto(
      theirRun,
      fixture('playwright.xml').replace(PLACEHOLDER, caseId),
      'application/xml',
      other.key,
    );
    expect(mine.body.matched).to.deep.equal({ byId: 0, byMapping: 0, newDraft: 4 });
    expect(theirCase).to.match(/^tc_/);
  });
});

describe('Importing past the size limit and the artifact quota', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ limits: { importMaxBytes: 2048, artifacts: 4 } });
  });
  after(async () => t?.stop());

  it('refuses a report larger than IMPORT_MAX_BYTES with 413, whether declared or streamed', async () => {
    const runId = (await t.request('POST', '/tests/runs', { body: { title: 'small' } })).body.id;
    const big = `<testsuite>${'<testcase name="x"/>'.repeat(200)}</testsuite>`;
    const res = await t.request('POST', `/tests/runs/${runId}/results/import`, {
      body: big,
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.status).to.equal(413);
    expect(res.body.error.details.limitBytes).to.equal(2048);
    // Streamed without a length (chunked): counted as it arrives.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(big.slice(i * 400, (i + 1) * 400)));
        c.close();
      },
    });
    const chunked = await fetch(`${t.api}/tests/runs/${runId}/results/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/xml' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).to.equal(413);
    expect(
      Number((await t.service.db('artifacts').where({ kind: 'test_result' }).count({ n: '*' }).first())!.n),
    ).to.equal(0);
  });

  it('refuses an import that would pass the artifact quota (402) and writes none of it', async () => {
    const runId = (await t.request('POST', '/tests/runs', { body: { title: 'quota' } })).body.id;
    const res = await t.request('POST', `/tests/runs/${runId}/results/import`, {
      body: fixture('jest.xml'),
      headers: { 'content-type': 'application/xml' },
    });
    expect(res.status).to.equal(402);
    expect(res.body.error.code).to.equal('QUOTA_EXCEEDED');
    expect(
      Number((await t.service.db('artifacts').where({ kind: 'test_case' }).count({ n: '*' }).first())!.n),
    ).to.equal(0);
    expect(Number((await t.service.db('test_case_mappings').count({ n: '*' }).first())!.n)).to.equal(0);
    expect((await t.service.db('project_usage').first('artifacts'))!.artifacts).to.equal(2); // the two test runs
  });
});
