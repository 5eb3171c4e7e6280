// MCP at /mcp through the official SDK client: the tools and their schemas (the REST ones), a run
// driven by a simulated executor and awaited by svc_otp_run, and refusals as tool errors.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'chai';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { call, mcpClient } from './mcp-client.js';

const locator = { by: 'role', value: 'button', name: 'Go' };

/** A schema of /openapi.json with its refs written as a tool's (`#/$defs/Name`), without title. */
function asToolSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { title: _title, ...rest } = JSON.parse(JSON.stringify(schema).replaceAll('#/components/schemas/', '#/$defs/'));
  return rest;
}

describe('MCP: tools over Streamable HTTP', () => {
  let t: TestService;
  let doc: any;
  let key: string;
  let projectKeys: { read: string };
  let client: Client;
  let readClient: Client;

  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100 } });
    const project = await t.newProject('admin');
    key = project.key;
    // A read key of the same project.
    const readKey = await t.request('POST', '/api-keys', { key, body: { name: 'reader', scope: 'read' } });
    projectKeys = { read: readKey.body.key };
    doc = await (await fetch(`${t.service.restUrl}/openapi.json`)).json();
    client = await mcpClient(t.service.restUrl, key);
    readClient = await mcpClient(t.service.restUrl, projectKeys.read);
  });
  after(async () => {
    await client?.close();
    await readClient?.close();
    await t?.stop();
  });

  it('lists the tools with scopes, annotations and the input schemas REST validates with', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      'svc_otp_run',
      'svc_otp_status',
      'svc_otp_sessions',
      'svc_otp_cancel',
      'svc_create_test_case',
      'svc_update_test_case',
      'svc_get_test_case',
      'svc_list_test_cases',
      'svc_get_run',
      'svc_list_requirements',
    ]) {
      expect(byName.has(name), name).to.equal(true);
    }
    expect(byName.get('svc_otp_status')!.annotations).to.include({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(byName.get('svc_otp_cancel')!.annotations).to.include({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get('svc_otp_run')!.annotations).to.include({ readOnlyHint: false, idempotentHint: false });
    expect(byName.get('svc_otp_run')!.description).to.contain('Needs scope write');
    expect(byName.get('svc_otp_cancel')!.description).to.contain('Needs scope write');
    expect(byName.get('svc_otp_status')!.description).to.contain('Needs scope read');

    const components = doc.components.schemas;
    // svc_create_test_case takes exactly POST /tests/cases's body, the named schemas it uses under $defs.
    const create = byName.get('svc_create_test_case')!.inputSchema as any;
    const { $defs, ...createRoot } = create;
    expect(createRoot).to.deep.equal(asToolSchema(components.TestCaseCreate));
    expect(Object.keys($defs)).to.include.members(['TestCaseStep', 'StepAction', 'Locator']);
    for (const [name, schema] of Object.entries($defs))
      expect(schema, name).to.deep.equal({ ...asToolSchema(components[name]), title: components[name].title });
    expect(doc.paths['/api/v1/tests/cases'].post.requestBody.content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/TestCaseCreate',
    });
    // svc_otp_run: POST /otp/runs's body plus waitMs.
    const run = structuredClone(byName.get('svc_otp_run')!.inputSchema) as any;
    expect(run.properties.waitMs).to.include({ type: 'integer', maximum: 55000 });
    delete run.properties.waitMs;
    expect(run).to.deep.equal(asToolSchema(components.OtpRunRequest));
    // svc_update_test_case: the PATCH body under patch.
    const update = byName.get('svc_update_test_case')!.inputSchema as any;
    expect(update.properties.patch).to.deep.equal(asToolSchema(components.TestCaseUpdate));
    expect(update.required).to.deep.equal(['id', 'patch']);
    // A list tool takes the list route's query parameters.
    const list = byName.get('svc_list_test_cases')!.inputSchema as any;
    const params = doc.paths['/api/v1/tests/cases'].get.parameters.map((p: any) => p.name).filter((n: string) => n);
    expect(Object.keys(list.properties).sort()).to.deep.equal(params.sort());
    // /mcp and the OAuth endpoints are described in /openapi.json beside /api/v1.
    for (const path of [
      '/mcp',
      '/.well-known/oauth-protected-resource/mcp',
      '/oauth/token',
      '/oauth/reg',
      '/oauth/token/revocation',
      '/.well-known/oauth-authorization-server/oauth',
    ]) {
      expect(doc.paths, path).to.have.property(path);
    }
  });

  it('creates a test case, runs it on an executor and waits for the verdict with the failing steps', async () => {
    const created = await call(client, 'svc_create_test_case', {
      title: 'Checkout',
      steps: [
        { otp: { action: 'navigate', url: 'https://shop.test/' } },
        { otp: { action: 'click', locator }, label: 'press Go' },
      ],
    });
    expect(created.isError).to.equal(false);
    expect(created.body.id).to.match(/^tc_/);
    const rest = await t.request('GET', `/tests/cases/${created.body.id}`, { key });
    expect(rest.body.steps).to.have.length(2);

    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ screenshot: true });
    const sessions = await call(readClient, 'svc_otp_sessions', {});
    expect(sessions.body.items.map((s: any) => s.id)).to.include(executor.sessionId);

    const answer = call(client, 'svc_otp_run', { testCaseIds: [created.body.id], waitMs: 20_000 });
    const exec0 = await executor.next('step.exec');
    executor.result(exec0, 'pass');
    const exec1 = await executor.next('step.exec');
    executor.result(exec1, 'fail', {
      error: { code: 'E_LOCATOR_NOT_FOUND', message: 'no button Go', triedLocators: [locator] },
      actual: 'nothing',
    });
    const result = await answer;
    expect(result.isError).to.equal(false);
    expect(result.body.finished).to.equal(true);
    expect(result.body.run).to.include({ status: 'failed' });
    expect(result.body.run.counts).to.deep.equal({ passed: 1, failed: 1, skipped: 0, total: 2 });
    expect(result.body.failingSteps).to.have.length(1);
    expect(result.body.failingSteps[0]).to.deep.include({
      stepIndex: 1,
      label: 'press Go',
      status: 'fail',
      actual: 'nothing',
    });
    expect(result.body.failingSteps[0].error.code).to.equal('E_LOCATOR_NOT_FOUND');

    const status = await call(readClient, 'svc_otp_status', { runId: result.body.run.id });
    expect(status.body.run.status).to.equal('failed');
    expect(status.body.failingSteps).to.deep.equal(result.body.failingSteps);
    const full = await call(readClient, 'svc_get_run', { runId: result.body.run.id });
    expect(full.body.steps).to.have.length(2);

    // A finished run cannot be cancelled: the REST code, as a tool error.
    const cancel = await call(client, 'svc_otp_cancel', { runId: result.body.run.id });
    expect(cancel.isError).to.equal(true);
    expect(cancel.body.error.code).to.equal('CONFLICT');
    executor.close();
  });

  it('answers a run without waiting, and svc_otp_cancel cancels it', async () => {
    const created = await call(client, 'svc_create_test_case', {
      title: 'Queued',
      steps: [{ otp: { action: 'navigate', url: 'https://shop.test/' } }],
    });
    const started = await call(client, 'svc_otp_run', { testCaseIds: [created.body.id] });
    expect(started.body.finished).to.equal(false);
    expect(started.body.run.status).to.equal('queued');
    const cancelled = await call(client, 'svc_otp_cancel', { runId: started.body.run.id });
    expect(cancelled.isError).to.equal(false);
    expect(cancelled.body.run.status).to.equal('cancelled');
  });

  it('refuses tier 2 tools to a read credential, and bad arguments, as tool errors with the REST codes', async () => {
    const run = await call(readClient, 'svc_otp_run', { testCaseIds: ['tc_nope'] });
    expect(run.isError).to.equal(true);
    expect(run.body.error.code).to.equal('FORBIDDEN');
    const cancel = await call(readClient, 'svc_otp_cancel', { runId: 'otr_nope' });
    expect(cancel.body.error.code).to.equal('FORBIDDEN');
    const create = await call(readClient, 'svc_create_test_case', { title: 'x', steps: [] });
    expect(create.body.error.code).to.equal('FORBIDDEN');

    const invalid = await call(client, 'svc_create_test_case', {
      title: 'x',
      steps: [{ otp: { action: 'click', locator: { by: 'nope', value: 'x' } } }],
    });
    expect(invalid.isError).to.equal(true);
    expect(invalid.body.error.code).to.equal('VALIDATION_ERROR');
    expect(invalid.body.error.details.fields.map((f: any) => f.field).join(' ')).to.contain('arguments.steps');
    const tooLong = await call(client, 'svc_otp_run', { testCaseIds: ['tc_x'], waitMs: 120_000 });
    expect(tooLong.body.error.code).to.equal('VALIDATION_ERROR');
    const missing = await call(readClient, 'svc_otp_status', { runId: 'otr_01jzzzzzzzzzzzzzzzzzzzzzzz' });
    expect(missing.body.error.code).to.equal('NOT_FOUND');
    const unknownTool = await call(readClient, 'svc_nothing', {});
    expect(unknownTool.body.error.code).to.equal('NOT_FOUND');
  });

  it('lists requirements with their coverage and reads and changes test cases', async () => {
    const requirement = await t.request('POST', '/requirements', { key, body: { title: 'Users can pay' } });
    expect(requirement.status).to.equal(201);
    const tc = await call(client, 'svc_create_test_case', {
      title: 'Pay',
      steps: [{ otp: { action: 'navigate', url: 'https://shop.test/pay' } }],
    });
    const link = await t.request('POST', `/tests/cases/${tc.body.id}/links`, {
      key,
      body: { relation: 'covers', targetId: requirement.body.id },
    });
    expect(link.status).to.equal(201);
    const list = await call(readClient, 'svc_list_requirements', {});
    const item = list.body.items.find((r: any) => r.id === requirement.body.id);
    expect(item.coverage).to.deep.include({ covered: true });
    expect(item.coverage.testCases.map((c: any) => c.id)).to.deep.equal([tc.body.id]);

    const updated = await call(client, 'svc_update_test_case', {
      id: tc.body.id,
      patch: { title: 'Pay by card' },
      version: tc.body.version,
    });
    expect(updated.body).to.include({ title: 'Pay by card', version: tc.body.version + 1 });
    const stale = await call(client, 'svc_update_test_case', {
      id: tc.body.id,
      patch: { title: 'again' },
      version: tc.body.version,
    });
    expect(stale.body.error.code).to.equal('PRECONDITION_FAILED');
    const read = await call(readClient, 'svc_get_test_case', { id: tc.body.id });
    expect(read.body.title).to.equal('Pay by card');
    const cases = await call(readClient, 'svc_list_test_cases', { limit: 2 });
    expect(cases.body.items).to.have.length(2);
    expect(cases.body.nextCursor).to.be.a('string');
  });

  it('answers 401 with the WWW-Authenticate header MCP clients follow, and serves the protected-resource metadata', async () => {
    const res = await fetch(`${t.service.restUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).to.equal(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).to.equal(
      `Bearer resource_metadata="${t.service.restUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect((await res.json()).error.code).to.equal('UNAUTHORIZED');
    const metadata = await (await fetch(`${t.service.restUrl}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).to.deep.include({
      resource: `${t.service.restUrl}/mcp`,
      authorization_servers: [`${t.service.restUrl}/oauth`],
    });
    expect(metadata.scopes_supported).to.deep.equal(['read', 'write', 'admin']);
    const root = await (await fetch(`${t.service.restUrl}/.well-known/oauth-protected-resource`)).json();
    expect(root.resource).to.equal(`${t.service.restUrl}/`);
    const badKey = await fetch(`${t.service.restUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer svc_pk_nothing_like_a_real_key_at_all_0000000000' },
    });
    expect(badKey.status).to.equal(401);
  });
});
