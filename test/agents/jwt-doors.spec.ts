// A JWT access token works wherever a key works (REST, the OTP socket, MCP) and every bad one is
// refused as a bad key is: 401 UNAUTHORIZED on REST and MCP, E_AUTH and close 4401 on the socket.
// Tokens here are signed with the service's own key from the database (tokens.ts); the real OAuth
// flow that issues them is tested in oauth-flow.spec.ts.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';
import { ACCEPTED, REFUSED, tryDoors } from './doors.js';
import { call, mcpClient } from './mcp-client.js';
import { signToken, type TokenOptions, tamper } from './tokens.js';

describe('JWT access tokens on every door', () => {
  let t: TestService;
  let base: TokenOptions;

  before(async () => {
    t = await startTestService();
    const project = await t.newProject('admin');
    const keyRow = await t.service.db('api_keys').where('project_id', project.projectId).first('id');
    await t.service
      .db('oauth_models')
      .insert({ model: 'Client', id: 'cli_jwt_test', payload: { client_id: 'cli_jwt_test' } });
    base = {
      keyId: keyRow.id,
      tenantId: project.tenantId,
      projectId: project.projectId,
      clientId: 'cli_jwt_test',
      scope: 'write',
    };
  });
  after(async () => t?.stop());

  it('accepts a valid token on REST, the socket (header and ?token=) and MCP, as the key behind it', async () => {
    const token = await signToken(t, base);
    expect(await tryDoors(t, token)).to.deep.equal(ACCEPTED);
    expect((await tryDoors(t, token, 'query')).socket).to.equal('welcome');
    const created = await t.request('POST', '/tests/cases', { key: token, body: { title: 'by token', steps: [] } });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ projectId: base.projectId, createdBy: base.keyId });
    const client = await mcpClient(t.service.restUrl, token);
    const read = await call(client, 'svc_get_test_case', { id: created.body.id });
    expect(read.body.title).to.equal('by token');
    await client.close();
  });

  it('never gives a token more than its scope, nor more than its key has', async () => {
    const readToken = await signToken(t, { ...base, scope: 'read' });
    expect((await t.request('GET', '/tests/cases', { key: readToken })).status).to.equal(200);
    expect(
      (await t.request('POST', '/tests/cases', { key: readToken, body: { title: 'x', steps: [] } })).status,
    ).to.equal(403);
    expect((await tryDoors(t, readToken)).socket).to.equal(4403);
    // An admin token of a write key acts as write.
    const project = await t.newProject('write');
    const keyRow = await t.service.db('api_keys').where('project_id', project.projectId).first('id');
    const admin = await signToken(t, {
      ...base,
      keyId: keyRow.id,
      tenantId: project.tenantId,
      projectId: project.projectId,
      scope: 'read write admin',
    });
    expect((await t.request('GET', '/api-keys', { key: admin })).status).to.equal(403);
    expect((await t.request('POST', '/tests/cases', { key: admin, body: { title: 'x', steps: [] } })).status).to.equal(
      201,
    );
  });

  it('refuses expired, wrong-audience, wrong-issuer, wrong-type, tampered, revoked and orphaned tokens as a bad key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      expired: await signToken(t, { ...base, exp: now - 120 }),
      'wrong audience': await signToken(t, { ...base, aud: 'https://elsewhere.test/' }),
      'wrong issuer': await signToken(t, { ...base, iss: 'https://elsewhere.test/oauth' }),
      'wrong type': await signToken(t, { ...base, typ: 'JWT' }),
      tampered: tamper(await signToken(t, { ...base, scope: 'read' })),
      'unknown client': await signToken(t, { ...base, clientId: 'cli_nobody' }),
      'revoked grant': await signToken(t, { ...base, grantId: 'grant_gone' }),
      'other project': await signToken(t, { ...base, projectId: 'prj_01jzzzzzzzzzzzzzzzzzzzzzzz' }),
      'not a jwt at all': 'eyJhbGciOiJFUzI1NiJ9.bm90.c2ln',
    };
    const revokedJti = `jti_revoked_${now}`;
    cases['revoked token'] = await signToken(t, { ...base, jti: revokedJti });
    expect((await tryDoors(t, cases['revoked token']!)).rest).to.equal(200);
    await t.service.oauth.revocations.revoke(revokedJti, now + 600);
    for (const [name, token] of Object.entries(cases)) expect(await tryDoors(t, token), name).to.deep.equal(REFUSED);
    const rest = await t.request('GET', '/tests/cases', { key: cases.expired });
    expect(rest.body.error.code).to.equal('UNAUTHORIZED');
  });

  it('refuses the tokens of a revoked key at once', async () => {
    const project = await t.newProject('admin');
    const created = await t.request('POST', '/api-keys', {
      key: project.key,
      body: { name: 'vouching', scope: 'write' },
    });
    const token = await signToken(t, {
      ...base,
      keyId: created.body.id,
      tenantId: project.tenantId,
      projectId: project.projectId,
    });
    expect(await tryDoors(t, token)).to.deep.equal(ACCEPTED);
    expect((await t.request('DELETE', `/api-keys/${created.body.id}`, { key: project.key })).status).to.equal(200);
    expect(await tryDoors(t, token)).to.deep.equal(REFUSED);
  });

  it('rotates the signing key: tokens of the old key verify until it is retired', async () => {
    const old = await signToken(t, base);
    const oldKid = (await t.service.oauth.signingKeys.list()).find((k) => k.status === 'active')!.kid;
    const newKid = await t.service.oauth.signingKeys.rotate();
    expect(newKid).to.not.equal(oldKid);
    const keys = await t.service.oauth.signingKeys.list();
    expect(keys.find((k) => k.kid === oldKid)!.status).to.equal('retiring');
    expect(keys.find((k) => k.kid === newKid)!.status).to.equal('active');
    const fresh = await signToken(t, base);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString()).kid).to.equal(newKid);
    expect(await tryDoors(t, old)).to.deep.equal(ACCEPTED);
    expect(await tryDoors(t, fresh)).to.deep.equal(ACCEPTED);
    expect(await t.service.oauth.signingKeys.retire()).to.deep.equal([oldKid]);
    // The verifier may keep an imported key for KEY_CACHE_MS; this process forgets it at once.
    expect(await tryDoors(t, old)).to.deep.equal(REFUSED);
    expect(await tryDoors(t, fresh)).to.deep.equal(ACCEPTED);
  });
});
