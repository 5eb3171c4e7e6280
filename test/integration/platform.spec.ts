// platform/*: projects with their first key, groups, the lifecycle of a project, entitlement and
// context; API keys read and renamed with If-Match.
import { expect } from 'chai';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

describe('Platform: projects, groups, lifecycle, entitlement', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  /** A fresh tenant with one project; answers its admin key and a request function. */
  async function tenant() {
    const { key, projectId, tenantId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      t.request(method, path, { key, body, headers });
    return { key, projectId, tenantId, req };
  }

  it("creates a project in the caller's tenant with a first admin key that works at once", async () => {
    const a = await tenant();
    const res = await a.req('POST', '/platform/projects', { name: 'Mobile app', description: 'iOS and Android' });
    expect(res.status).to.equal(201);
    expect(res.body).to.deep.include({ name: 'Mobile app', status: 'active', tenantId: a.tenantId, version: 1 });
    expect(res.body.adminKey).to.deep.include({ scope: 'admin', projectId: res.body.id });
    expect(res.body.adminKey.key).to.match(/^svc_pk_/);
    const context = await t.request('GET', '/platform/context', { key: res.body.adminKey.key });
    expect(context.body).to.deep.include({
      projectId: res.body.id,
      tenantId: a.tenantId,
      scope: 'admin',
      tier: 'free',
      projectStatus: 'active',
    });
    // The new project's data is its own.
    await t.request('POST', '/notes', { key: res.body.adminKey.key, body: { content: 'only here' } });
    expect((await a.req('GET', '/notes')).body.items).to.deep.equal([]);
    // Only the hash of its key is stored.
    const row = await t.service.db('api_keys').where('id', res.body.adminKey.id).first();
    expect(JSON.stringify(row)).not.to.contain(res.body.adminKey.key);
  });

  it('groups projects of a tenant; a deleted group leaves its projects ungrouped', async () => {
    const a = await tenant();
    const group = (await a.req('POST', '/platform/groups', { name: 'Web' })).body;
    const duplicate = await a.req('POST', '/platform/groups', { name: 'Web' });
    expect(duplicate.status).to.equal(409);
    const project = (await a.req('POST', '/platform/projects', { name: 'Site', groupId: group.id })).body;
    expect(project.groupId).to.equal(group.id);
    expect((await a.req('GET', `/platform/groups/${group.id}`)).body.projectIds).to.deep.equal([project.id]);
    const other = await tenant();
    const foreign = await other.req('POST', '/platform/projects', { name: 'x', groupId: group.id });
    expect(foreign.status).to.equal(400);
    expect(foreign.body.error.details.fields).to.deep.equal([
      { field: 'body.groupId', message: `group ${group.id} not found in this tenant` },
    ]);
    expect((await a.req('DELETE', `/platform/groups/${group.id}`)).status).to.equal(204);
    const after = (await a.req('GET', `/platform/projects/${project.id}`)).body;
    expect(after).not.to.have.property('groupId');
    expect(after.version).to.equal(2);
  });

  it('archives a project: reads work, writes answer 409, executors are refused; restore makes it writable again', async () => {
    const a = await tenant();
    const note = (await a.req('POST', '/notes', { content: 'before' })).body;
    const executor = await TestExecutor.connect(t.otpUrl, { key: a.key });
    await executor.hello();

    const archived = await a.req('POST', `/platform/lifecycle/${a.projectId}/archive`);
    expect(archived.status).to.equal(200);
    expect(archived.body).to.include({ projectId: a.projectId, status: 'archived', deletedAt: null });
    expect(archived.body.archivedAt).to.be.a('string');
    expect((await executor.closed).code).to.be.a('number');

    expect((await a.req('GET', `/notes/${note.id}`)).status).to.equal(200);
    const write = await a.req('POST', '/notes', { content: 'after' });
    expect(write.status).to.equal(409);
    expect(write.body.error).to.deep.include({ code: 'CONFLICT', details: { projectStatus: 'archived' } });
    expect((await a.req('PATCH', `/notes/${note.id}`, { content: 'changed' })).status).to.equal(409);
    expect((await a.req('GET', '/platform/context')).body.projectStatus).to.equal('archived');
    const refused = await TestExecutor.connect(t.otpUrl, { key: a.key });
    expect((await refused.next('error')).payload.code).to.equal('E_AUTH');

    // Archiving again changes nothing; restore (allowed while archived) brings writes back.
    expect((await a.req('POST', `/platform/lifecycle/${a.projectId}/archive`)).body.version).to.equal(
      archived.body.version,
    );
    const stale = await a.req('POST', `/platform/lifecycle/${a.projectId}/restore`, undefined, { 'if-match': '"1"' });
    expect(stale.status).to.equal(412);
    const restored = await a.req('POST', `/platform/lifecycle/${a.projectId}/restore`, undefined, {
      'if-match': `"${archived.body.version}"`,
    });
    expect(restored.body).to.include({ status: 'active', archivedAt: null });
    expect((await a.req('POST', '/notes', { content: 'after' })).status).to.equal(201);
  });

  it('deletes a project: its keys stop working and nobody finds it any more', async () => {
    const a = await tenant();
    const made = (await a.req('POST', '/platform/projects', { name: 'Doomed' })).body;
    const doomedKey = made.adminKey.key;
    const queued = await t.request('POST', '/otp/runs', {
      key: doomedKey,
      body: {
        testCaseIds: [
          (await t.request('POST', '/tests/cases', { key: doomedKey, body: { title: 'x', steps: [] } })).body.id,
        ],
      },
    });
    expect(queued.body.status).to.equal('queued');
    const deleted = await a.req('POST', `/platform/lifecycle/${made.id}/delete`);
    expect(deleted.body).to.include({ projectId: made.id, status: 'deleted' });
    expect(deleted.body.deletedAt).to.be.a('string');
    expect((await t.request('GET', '/platform/context', { key: doomedKey })).status).to.equal(401);
    expect((await a.req('GET', `/platform/projects/${made.id}`)).status).to.equal(404);
    expect((await a.req('GET', `/platform/lifecycle/${made.id}`)).status).to.equal(404);
    expect((await a.req('POST', `/platform/lifecycle/${made.id}/restore`)).status).to.equal(404);
    expect(
      (await a.req('GET', '/platform/projects?limit=200')).body.items.map((p: { id: string }) => p.id),
    ).not.to.include(made.id);
    const run = await t.service.db('otp_runs').where('id', queued.body.runId).first('status');
    expect(run.status).to.equal('cancelled');
    // Another tenant's admin cannot touch a project that is not theirs.
    const other = await tenant();
    expect((await other.req('POST', `/platform/lifecycle/${a.projectId}/archive`)).status).to.equal(404);
  });

  it('lets a project delete itself, after which its own key is refused', async () => {
    const a = await tenant();
    expect((await a.req('DELETE', `/platform/projects/${a.projectId}`)).status).to.equal(204);
    expect((await a.req('GET', '/platform/context')).status).to.equal(401);
  });

  it('answers the entitlement: tier, limits and current usage', async () => {
    const a = await tenant();
    await a.req('POST', '/bugs', { title: 'one' });
    await a.req('POST', '/notes', { content: 'two' });
    const res = await a.req('GET', '/platform/entitlement');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ tier: 'free', projectId: a.projectId, tenantId: a.tenantId });
    expect(res.body.limits).to.deep.equal({
      storageBytes: 1024 ** 3,
      artifacts: 10_000,
      requestsPerMinute: 600,
      aiCallsPerMonth: 200,
    });
    expect(res.body.usage).to.deep.equal({ artifacts: 2, requestsThisWindow: 3, storageBytes: 0 });
    expect(res.body.upgradeUrl).to.be.a('string');
    await t.service.db('tenants').where('id', a.tenantId).update({ tier: 'pro' });
    const pro = await a.req('GET', '/platform/entitlement');
    expect(pro.body.tier).to.equal('pro');
    expect(pro.body.limits.artifacts).to.equal(1_000_000);
  });

  it('reads and renames an API key with If-Match', async () => {
    const a = await tenant();
    const made = (await a.req('POST', '/api-keys', { scope: 'read', name: 'dashboard' })).body;
    const read = await a.req('GET', `/api-keys/${made.id}`);
    expect(read.body).to.include({ name: 'dashboard', scope: 'read', version: 1 });
    expect(read.body).not.to.have.property('key');
    expect(read.headers.get('etag')).to.equal('"1"');
    const renamed = await a.req('PATCH', `/api-keys/${made.id}`, { name: 'wallboard' }, { 'if-match': '"1"' });
    expect(renamed.body).to.include({ name: 'wallboard', version: 2 });
    const stale = await a.req('PATCH', `/api-keys/${made.id}`, { name: 'again' }, { 'if-match': '"1"' });
    expect(stale.status).to.equal(412);
    const bad = await a.req('PATCH', `/api-keys/${made.id}`, { scope: 'admin' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details.fields.map((f: { field: string }) => f.field)).to.include('body.scope');
    const other = await tenant();
    expect((await other.req('GET', `/api-keys/${made.id}`)).status).to.equal(404);
    // A retried key creation never makes a second key, and never shows the secret twice.
    const headers = { 'idempotency-key': 'key-once' };
    const first = await a.req('POST', '/api-keys', { scope: 'write', name: 'ci' }, headers);
    const retry = await a.req('POST', '/api-keys', { scope: 'write', name: 'ci' }, headers);
    expect(retry.status).to.equal(409);
    expect(retry.body.error.details.id).to.equal(first.body.id);
    expect(JSON.stringify(retry.body)).not.to.contain(first.body.key);
    const stored = await t.service.db('idempotency_keys').where('idempotency_key', 'key-once').first();
    expect(JSON.stringify(stored)).not.to.contain(first.body.key);
    const keys = (await a.req('GET', '/api-keys?limit=200')).body.items.filter(
      (k: { name: string }) => k.name === 'ci',
    );
    expect(keys).to.have.length(1);
  });
});
