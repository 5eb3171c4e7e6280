// GET /otp/runs/{id} answers the run as JSON (the default), as JUnit XML (format=junit, or an Accept
// that asks for XML) and as a CTRF report (format=ctrf), each read back as a CI system reads it.
import { expect } from 'chai';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

describe('A run as JUnit XML and as CTRF over REST', () => {
  let t: TestService;
  let runId: string;
  let key: string;
  before(async () => {
    t = await startTestService();
    ({ key } = await t.newProject('admin'));
    const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };
    const ok = (await t.request('POST', '/tests/cases', { key, body: { title: 'Goes', steps: [click] } })).body.id;
    const bad = (
      await t.request('POST', '/tests/cases', { key, body: { title: 'Checks & fails', steps: [click, click] } })
    ).body.id;
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({}, { name: 'ci-executor', version: '2.1.0' });
    runId = (await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [ok, bad] } })).body.runId;
    executor.result(await executor.next('step.exec'), 'pass');
    executor.result(await executor.next('step.exec'), 'pass');
    executor.result(await executor.next('step.exec'), 'fail', {
      error: { code: 'E_LOCATOR_NOT_FOUND', message: 'no #go' },
    });
    expect((await executor.next('run.finished')).payload.status).to.equal('failed');
    executor.close();
  });
  after(async () => t?.stop());

  const get = (query: string, accept?: string) =>
    fetch(`${t.api}/otp/runs/${runId}${query}`, {
      headers: { authorization: `Bearer ${key}`, ...(accept ? { accept } : {}) },
    });

  it('answers JUnit XML for format=junit and for Accept: application/xml', async () => {
    for (const res of [await get('?format=junit'), await get('', 'application/xml')]) {
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/xml; charset=utf-8');
      const junit: any = await parseJunit(await res.text());
      expect(junit).to.include({ tests: 2, failures: 1, errors: 0 });
      expect(junit.testsuite[0].testcase[1]).to.deep.include({ name: 'Checks & fails' });
      expect(junit.testsuite[0].testcase[1].failure[0]).to.include({ type: 'E_LOCATOR_NOT_FOUND', message: 'no #go' });
    }
  });

  it('answers a CTRF report for format=ctrf, naming the executor that ran it', async () => {
    const res = await get('?format=ctrf');
    expect(res.status).to.equal(200);
    const report = await res.json();
    expect(validateCtrf(report).valid, JSON.stringify(validateCtrf(report).errors)).to.equal(true);
    expect(report.results.summary).to.include({ tests: 2, passed: 1, failed: 1 });
    expect(report.results.tests[1]).to.include({
      status: 'failed',
      browser: 'ci-executor 2.1.0',
      message: 'E_LOCATOR_NOT_FOUND: no #go',
    });
  });

  it('answers the run itself by default, refuses an unknown format, and keeps another project out', async () => {
    expect((await (await get('')).json()).id).to.equal(runId);
    const unknown = await t.request('GET', `/otp/runs/${runId}?format=pdf`, { key });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.details.fields[0].field).to.equal('query.format');
    const { key: otherKey } = await t.newProject('read');
    expect((await t.request('GET', `/otp/runs/${runId}?format=junit`, { key: otherKey })).status).to.equal(404);
  });

  it('documents both representations in /openapi.json', async () => {
    const spec = (await t.request('GET', '/openapi.json')).body;
    const content = spec.paths['/api/v1/otp/runs/{id}'].get.responses['200'].content;
    expect(content['application/xml'].schema.type).to.equal('string');
    expect(content['application/json'].schema.oneOf.map((s: { $ref: string }) => s.$ref)).to.deep.equal([
      '#/components/schemas/OtpRun',
      '#/components/schemas/CtrfReport',
    ]);
  });
});
