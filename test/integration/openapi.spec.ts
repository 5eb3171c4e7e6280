// /openapi.json: a valid OpenAPI 3.1 document (checked by an independent validator), generated from
// the route definitions, complete, and enough on its own for a client to do real work.

import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { expect } from 'chai';
import { errorStatuses, openApiPath, operationIdOf } from '../../src/rest/openapi.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { OpenApiResponseChecker } from '../support/openapi-check.js';
import { openApiClient } from '../support/openapi-client.js';
import { startTestService, type TestService } from '../support/service.js';

type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

describe('/openapi.json', () => {
  let t: TestService;
  let doc: any;
  before(async () => {
    t = await startTestService();
    const res = await t.request('GET', '/openapi.json', { key: null });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('application/json');
    doc = res.body;
  });
  after(async () => t?.stop());

  it('is a valid OpenAPI 3.1 document by an independent validator', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
  });

  it('has every route of the service, with unique operation ids, security and error answers', () => {
    const ids = new Set<string>();
    for (const def of t.service.api.routes) {
      const operation = doc.paths[openApiPath(def.path)]?.[def.method];
      expect(operation, `${def.method} ${def.path}`).to.be.an('object');
      expect(operation.operationId).to.equal(operationIdOf(def));
      expect(ids.has(operation.operationId), operation.operationId).to.equal(false);
      ids.add(operation.operationId);
      for (const status of errorStatuses(def))
        expect(operation.responses, `${def.path} ${status}`).to.have.property(String(status));
      if (def.auth === 'none') {
        expect(operation.security).to.deep.equal([]);
      } else {
        expect(operation.security).to.deep.equal([{ apiKey: [def.auth] }]);
        for (const status of ['401', '403', '429']) expect(operation.responses).to.have.property(status);
      }
      const headers = (operation.parameters ?? []).map((p: { $ref?: string }) => p.$ref);
      if (def.method === 'post' && def.auth !== 'none')
        expect(headers).to.include('#/components/parameters/IdempotencyKey');
      if (def.method === 'patch') expect(headers).to.include('#/components/parameters/IfMatch');
      if (def.body) expect(operation.requestBody.content).to.have.property('application/json');
      if (def.multipart) expect(operation.requestBody.content).to.have.property('multipart/form-data');
      if (def.response)
        expect(operation.responses[String(def.status ?? 200)].content['application/json'].schema).to.be.an('object');
    }
    // Every resource group of the API has its place in the document.
    for (const group of [
      'bugs',
      'tickets',
      'requirements',
      'specifications',
      'tests/cases',
      'tests/plans',
      'tests/runs',
      'tests/results',
      'releases',
      'release-plans',
      'milestones',
      'kb',
      'memories',
      'notes',
      'webhooks',
      'api-keys',
      'platform/projects',
      'platform/groups',
    ]) {
      expect(doc.paths, group).to.have.property(`/api/v1/${group}`);
      expect(doc.paths, group).to.have.property(`/api/v1/${group}/{id}`);
    }
    for (const path of [
      '/api/v1/platform/context',
      '/api/v1/platform/entitlement',
      '/api/v1/platform/lifecycle/{projectId}/archive',
      '/api/v1/requirements/{id}/coverage',
      '/api/v1/otp/runs',
      '/openapi.json',
    ]) {
      expect(doc.paths).to.have.property(path);
    }
    expect(doc.components.securitySchemes.apiKey).to.deep.include({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/v1/bugs'].post.responses['402'].$ref).to.equal('#/components/responses/QuotaExceeded');
  });

  it('has schemas that compile under JSON Schema 2020-12, every $ref resolving', () => {
    const ajv = new Ajv2020({ strict: false, discriminator: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'doc');
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.getSchema(`doc#/components/schemas/${name}`), name).not.to.throw();
    }
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const target = ref.slice(8, -1);
      expect(target.startsWith('#/components/'), target).to.equal(true);
      const found = target
        .split('/')
        .slice(1)
        .reduce((node: any, key: string) => node?.[key], doc);
      expect(found, target).to.not.equal(undefined);
    }
  });

  it('catches a response that the document does not describe (the suite-wide check can fail)', () => {
    const checker = new OpenApiResponseChecker(doc);
    const bug = {
      id: 'bug_1',
      title: 'x',
      labels: [],
      status: 'open',
      priority: 'medium',
      severity: 'major',
      projectId: 'p',
      version: 1,
      createdBy: null,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v1/bugs/bug_1',
        status: 200,
        body: bug,
        contentType: 'application/json',
      }),
    ).to.deep.equal([]);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v1/bugs/bug_1',
        status: 200,
        body: { ...bug, surprise: 1 },
        contentType: 'application/json',
      }),
    ).to.have.length(1);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v1/bugs/bug_1',
        status: 418,
        body: {},
        contentType: 'application/json',
      }),
    ).to.have.length(1);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v1/not/documented',
        status: 200,
        body: {},
        contentType: 'application/json',
      }),
    ).to.have.length(1);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v1/not/documented',
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: 'x', details: {} } },
        contentType: 'application/json',
      }),
    ).to.deep.equal([]);
  });

  it('is enough for a client built from it alone: requirement, covering test case, OTP run, coverage', async () => {
    const { key } = await t.newProject('admin');
    const documentUrl = `${t.service.restUrl}/openapi.json`;
    const fetched = await (await fetch(documentUrl)).json();
    const call = openApiClient(fetched, documentUrl, key);

    const requirement = await call('createRequirement', { body: { title: 'Users can sign in', priority: 'must' } });
    expect(requirement.status).to.equal(201);
    const testCase = await call('createTestCase', {
      body: {
        title: 'Sign in',
        steps: [
          { otp: { action: 'navigate', url: 'https://app.test/login' } },
          { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Sign in' } }, label: 'sign in' },
        ],
      },
    });
    expect(testCase.status).to.equal(201);
    const link = await call('createTestCaseLink', {
      params: { id: testCase.body.id },
      body: { targetId: requirement.body.id, relation: 'covers' },
    });
    expect(link.status).to.equal(201);
    const testRun = await call('createTestRun', { body: { title: 'sign-in check', testCaseIds: [testCase.body.id] } });
    expect(testRun.status).to.equal(201);

    const protocol = await call('getOtpProtocol');
    const executor = await TestExecutor.connect(t.otpUrl.replace(/\/otp$/, protocol.body.websocketPath), { key });
    await executor.hello();
    const run = await call('startOtpRun', {
      body: { testCaseIds: [testCase.body.id], testRunId: testRun.body.id, finishTestRun: true },
    });
    expect(run.status).to.equal(202);
    executor.result(await executor.next('step.exec'), 'pass');
    executor.result(await executor.next('step.exec'), 'pass');
    await executor.next('run.finished');
    executor.close();

    const coverage = await eventually(async () => {
      const res = await call('getRequirementCoverage', { params: { id: requirement.body.id } });
      expect(res.body.testCases[0]?.latestResult?.status).to.equal('passed');
      return res.body;
    });
    expect(coverage).to.deep.include({ artifactId: requirement.body.id, covered: true });
    expect(coverage.testCases[0]).to.deep.include({ id: testCase.body.id, via: [requirement.body.id] });
    expect(coverage.testCases[0].latestResult).to.include({ testRunId: testRun.body.id, otpRunId: run.body.runId });
    const closed = await call('getTestRun', { params: { id: testRun.body.id } });
    expect(closed.body).to.deep.include({ status: 'closed' });
    expect(closed.body.summary).to.include({ total: 1, passed: 1 });
  });
});
