// GET /tests/runs/{id} answers the test run as JSON (the default), JUnit XML (format=junit or Accept:
// application/xml) and CTRF (format=ctrf), from its latest result per case: results by hand and
// imported alike, a case without a result skipped, flaky passes as flakyFailure-free passes marked flaky.
import { expect } from 'chai';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { caseResults, runReport } from '../../src/reports/case-results.js';
import { reportToCtrf } from '../../src/reports/ctrf.js';
import { reportToJunit } from '../../src/reports/junit.js';
import { startTestService, type TestService } from '../support/service.js';

describe('A test run as JUnit XML and CTRF', () => {
  let t: TestService;
  let runId: string;
  let ids: string[];
  before(async () => {
    t = await startTestService();
    ids = [];
    for (const title of ['Logs in', 'Pays & ships', 'Never run'])
      ids.push((await t.request('POST', '/tests/cases', { body: { title, steps: [] } })).body.id);
    runId = (await t.request('POST', '/tests/runs', { body: { title: '2.3 regression', testCaseIds: ids } })).body.id;
    const result = (testCaseId: string, status: string, extra = {}) =>
      t.request('POST', '/tests/results', { body: { testRunId: runId, testCaseId, status, ...extra } });
    await result(ids[0]!, 'failed', { comment: 'first try failed' });
    await result(ids[0]!, 'passed', { durationMs: 1200 }); // the latest counts
    await result(ids[1]!, 'failed', { durationMs: 800, comment: 'total is <40> not 42', evidenceAssetIds: ['ast_1'] });
  });
  after(async () => t?.stop());

  const get = (query: string, accept?: string) =>
    fetch(`${t.api}/tests/runs/${runId}${query}`, {
      headers: { authorization: `Bearer ${t.adminKey}`, ...(accept ? { accept } : {}) },
    });

  it('answers JUnit for format=junit and Accept: application/xml, read back by an independent parser', async () => {
    for (const res of [await get('?format=junit'), await get('', 'application/xml')]) {
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
      const junit: any = await parseJunit(await res.text());
      expect(junit).to.include({ tests: 3, failures: 1, skipped: 1 });
      const cases = junit.testsuite[0].testcase;
      expect(cases.map((c: any) => [c.name, c.file])).to.deep.equal([
        ['Logs in', ids[0]],
        ['Pays & ships', ids[1]],
        ['Never run', ids[2]],
      ]);
      expect(cases[0]).to.not.have.any.keys('failure', 'skipped');
      expect(cases[0].time).to.equal(1.2);
      expect(cases[1].failure[0]).to.include({ type: 'failed', message: 'total is <40> not 42' });
      expect(cases[1]['system-out'][0]).to.contain('/api/v1/assets/items/ast_1/download]]');
      expect(cases[2].skipped[0]).to.include({ message: 'no result yet' });
    }
  });

  it('answers CTRF for format=ctrf, valid against its schema; JSON by default', async () => {
    const report: any = await (await get('?format=ctrf')).json();
    const check = validateCtrf(report);
    expect(check.valid, JSON.stringify(check.errors)).to.equal(true);
    expect(report.results.tests.map((x: any) => [x.testId, x.status])).to.deep.equal([
      [ids[0], 'passed'],
      [ids[1], 'failed'],
      [ids[2], 'skipped'],
    ]);
    expect((await (await get('')).json()).summary).to.include({ total: 3, passed: 1, failed: 1, untested: 1 });
    expect((await get('?format=pdf')).status).to.equal(400);
  });

  it('documents the representations in /openapi.json', async () => {
    const spec = (await t.request('GET', '/openapi.json')).body;
    const content = spec.paths['/api/v1/tests/runs/{id}'].get.responses['200'].content;
    expect(content['application/xml'].schema.type).to.equal('string');
    expect(content['application/json'].schema.oneOf.map((s: { $ref: string }) => s.$ref)).to.deep.equal([
      '#/components/schemas/TestRun',
      '#/components/schemas/CtrfReport',
    ]);
  });
});

describe('Reports with retries (attempts per step) and flaky cases', () => {
  it('takes the last attempt as the outcome, a pass after a failure as flaky: flakyFailure in JUnit, flaky and retryAttempts in CTRF', async () => {
    const step = (stepIndex: number, status: string, attempt: number) => ({
      stepIndex,
      caseIndex: 0,
      label: null,
      action: { action: 'click' },
      status,
      durationMs: 10,
      actual: null,
      evidence: null,
      attempt,
      error: status === 'fail' ? { code: 'E_ASSERT_FAILED', message: `attempt ${attempt} failed` } : null,
    });
    const run = {
      id: 'otr_1',
      status: 'passed',
      testCases: [{ id: 'tc_1', title: 'Sometimes fails', steps: 1 }],
      createdAt: '2026-11-25T10:00:00.000Z',
      startedAt: '2026-11-25T10:00:00.000Z',
      finishedAt: '2026-11-25T10:00:01.000Z',
      durationMs: 1000,
      steps: [step(0, 'fail', 1), step(0, 'fail', 2), step(0, 'pass', 3)],
    };
    const [c] = caseResults(run);
    expect(c).to.deep.include({ outcome: 'flaky', attempts: 3 });
    const junit: any = await parseJunit(reportToJunit(runReport(run), 'http://svc'));
    expect(junit.tests).to.equal(1);
    expect(junit.failures).to.equal(0);
    const xml = reportToJunit(runReport(run), 'http://svc');
    expect(xml.match(/<flakyFailure message="attempt \d failed" type="E_ASSERT_FAILED"\/>/g)).to.have.length(2);
    const ctrf = reportToCtrf(runReport(run), { baseUrl: 'http://svc' });
    expect(validateCtrf(ctrf).valid).to.equal(true);
    expect(ctrf.results.tests[0]).to.deep.include({ status: 'passed', flaky: true, retries: 2 });
    expect(ctrf.results.tests[0]!.retryAttempts!.map((a) => a.attempt)).to.deep.equal([1, 2]);
    expect(ctrf.results.summary.flaky).to.equal(1);
  });
});
