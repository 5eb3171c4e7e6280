// OAuth 2.1 over real HTTP: discovery, dynamic registration, authorization code with PKCE through the
// consent page (driven as a browser drives it), token, refresh, client credentials and revocation;
// then the tokens on REST, the OTP socket and MCP.
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';
import { ACCEPTED, REFUSED, tryDoors } from './doors.js';
import { Browser, basic, claimsOf, form, headerOf, pkce } from './oauth-helpers.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

describe('OAuth 2.1: flows over HTTP and their tokens on every door', () => {
  let t: TestService;
  let base: string;
  let meta: any;
  let project: { key: string; projectId: string; tenantId: string };
  let writeKey: string;
  let readKey: string;

  before(async () => {
    t = await startTestService();
    base = t.service.restUrl;
    project = await t.newProject('admin');
    writeKey = (await t.request('POST', '/api-keys', { key: project.key, body: { name: 'consent', scope: 'write' } }))
      .body.key;
    readKey = (await t.request('POST', '/api-keys', { key: project.key, body: { name: 'reader', scope: 'read' } })).body
      .key;
  });
  after(async () => t?.stop());

  async function register(body: Record<string, unknown>, key?: string) {
    const res = await fetch(meta.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  /** The code flow up to the redirect back to the client: answers the browser and where it ended. */
  async function authorize(
    clientId: string,
    scope: string,
    consent: { key: string; scope: string } | 'deny',
    extra: Record<string, string> = {},
  ) {
    const { verifier, challenge } = pkce();
    const browser = new Browser();
    const url = new URL(meta.authorization_endpoint);
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope,
      state: 'st4te',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${base}/mcp`,
      ...extra,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const page = await browser.follow(await browser.get(url.href), base);
    expect(page).to.be.instanceOf(Response);
    const html = await (page as Response).text();
    expect((page as Response).status, html).to.equal(200);
    const action = /action="([^"]+\/confirm)"/.exec(html)![1]!;
    const target = consent === 'deny' ? action.replace(/confirm$/, 'abort') : action;
    const posted = await browser.post(
      new URL(target, base).href,
      consent === 'deny' ? {} : { api_key: consent.key, scope: consent.scope },
    );
    const end = await browser.follow(posted, base);
    return { end, verifier, html, posted };
  }

  async function token(fields: Record<string, string>, headers: Record<string, string> = {}) {
    return form(meta.token_endpoint, fields, headers);
  }

  it('publishes RFC 8414 metadata at the path-inserted address, and the provider’s own', async () => {
    const res = await fetch(`${base}/.well-known/oauth-authorization-server/oauth`);
    expect(res.status).to.equal(200);
    meta = await res.json();
    expect(meta.issuer).to.equal(`${base}/oauth`);
    expect(meta.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(meta.grant_types_supported).to.include.members([
      'authorization_code',
      'refresh_token',
      'client_credentials',
    ]);
    for (const endpoint of [
      'authorization_endpoint',
      'token_endpoint',
      'registration_endpoint',
      'revocation_endpoint',
      'jwks_uri',
    ]) {
      expect(meta[endpoint], endpoint).to.match(new RegExp(`^${base}/oauth/`));
    }
    const own = await (await fetch(`${base}/oauth/.well-known/openid-configuration`)).json();
    expect(own.issuer).to.equal(meta.issuer);
    const jwks = await (await fetch(meta.jwks_uri)).json();
    expect(jwks.keys[0]).to.include({ alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0]).to.not.have.property('d');
  });

  let publicClient: string;
  let access: string;
  let refresh: string;

  it('registers a public client and runs the code flow with PKCE through the consent page', async () => {
    const reg = await register({
      client_name: 'Test agent',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(reg.status).to.equal(201);
    publicClient = reg.body.client_id;
    expect(reg.body).to.not.have.property('svc_project_id');

    const { end, verifier, html } = await authorize(publicClient, 'read write admin', {
      key: writeKey,
      scope: 'admin',
    });
    expect(html).to.contain('Authorize Test agent');
    expect(html).to.match(/<label[^>]*for="api_key"/);
    const back = end as URL;
    expect(back.origin + back.pathname).to.equal(REDIRECT);
    expect(back.searchParams.get('state')).to.equal('st4te');
    const code = back.searchParams.get('code')!;
    // A wrong verifier is refused; the right one gets the tokens.
    const wrong = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: publicClient,
      code_verifier: 'x'.repeat(43),
      resource: `${base}/mcp`,
    });
    expect(wrong.status).to.equal(400);
    const again = await authorize(publicClient, 'read write admin', { key: writeKey, scope: 'admin' });
    const code2 = (again.end as URL).searchParams.get('code')!;
    const issued = await token({
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      client_id: publicClient,
      code_verifier: again.verifier,
      resource: `${base}/mcp`,
    });
    expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
    expect(issued.body.token_type).to.equal('Bearer');
    // The key behind the consent has write: asking for admin grants write at most.
    expect(issued.body.scope).to.equal('read write');
    access = issued.body.access_token;
    refresh = issued.body.refresh_token;
    expect(refresh).to.be.a('string');
    expect(headerOf(access)).to.include({ typ: 'at+jwt', alg: 'ES256' });
    const claims = claimsOf(access);
    expect(claims).to.include({
      iss: `${base}/oauth`,
      aud: `${base}/`,
      client_id: publicClient,
      project_id: project.projectId,
      tenant_id: project.tenantId,
    });
    expect(claims.grant_id).to.be.a('string');
    void verifier;
  });

  it('uses the access token on REST, the socket and MCP as the key that consented', async () => {
    expect(await tryDoors(t, access)).to.deep.equal(ACCEPTED);
    expect((await tryDoors(t, access, 'query')).socket).to.equal('welcome');
    expect((await t.request('GET', '/api-keys', { key: access })).status).to.equal(403);
  });

  it('refreshes (the refresh token rotates), and revoking the refresh token stops the grant’s access tokens', async () => {
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: publicClient });
    expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
    expect(refreshed.body.refresh_token).to.not.equal(refresh);
    expect(claimsOf(refreshed.body.access_token).jti).to.not.equal(claimsOf(access).jti);
    expect(await tryDoors(t, refreshed.body.access_token)).to.deep.equal(ACCEPTED);

    const revoked = await form(meta.revocation_endpoint, {
      token: refreshed.body.refresh_token,
      token_type_hint: 'refresh_token',
      client_id: publicClient,
    });
    expect(revoked.status).to.equal(200);
    expect(await tryDoors(t, refreshed.body.access_token)).to.deep.equal(REFUSED);
    expect(await tryDoors(t, access)).to.deep.equal(REFUSED);
    const reuse = await token({
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: publicClient,
    });
    expect(reuse.status).to.equal(400);
  });

  it('revokes one JWT access token at the revocation endpoint', async () => {
    const flow = await authorize(publicClient, 'read write', { key: writeKey, scope: 'write' });
    const issued = await token({
      grant_type: 'authorization_code',
      code: (flow.end as URL).searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: publicClient,
      code_verifier: flow.verifier,
    });
    expect(issued.status).to.equal(200);
    expect(claimsOf(issued.body.access_token).aud).to.equal(`${base}/`);
    expect(await tryDoors(t, issued.body.access_token)).to.deep.equal(ACCEPTED);
    // Another client may not revoke it.
    const other = await register({
      client_name: 'Other',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    });
    await form(meta.revocation_endpoint, { token: issued.body.access_token, client_id: other.body.client_id });
    expect((await tryDoors(t, issued.body.access_token)).rest).to.equal(200);
    const revoked = await form(meta.revocation_endpoint, {
      token: issued.body.access_token,
      token_type_hint: 'access_token',
      client_id: publicClient,
    });
    expect(revoked.status).to.equal(200);
    expect(await tryDoors(t, issued.body.access_token)).to.deep.equal(REFUSED);
    // The refresh token of the grant still works: only that access token was revoked.
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: issued.body.refresh_token,
      client_id: publicClient,
    });
    expect(refreshed.status).to.equal(200);
  });

  it('grants what the consenting key allows, refuses bad keys on the page, and reports a denial to the client', async () => {
    const reader = await authorize(publicClient, 'read write', { key: readKey, scope: 'write' });
    const issued = await token({
      grant_type: 'authorization_code',
      code: (reader.end as URL).searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: publicClient,
      code_verifier: reader.verifier,
    });
    expect(issued.body.scope).to.equal('read');
    const doors = await tryDoors(t, issued.body.access_token);
    expect(doors).to.deep.equal({ rest: 200, socket: 4403, mcp: 200 });

    const { verifier: _v, ...rest } = await (async () => {
      const { challenge } = pkce();
      const browser = new Browser();
      const url = new URL(meta.authorization_endpoint);
      for (const [k, v] of Object.entries({
        response_type: 'code',
        client_id: publicClient,
        redirect_uri: REDIRECT,
        scope: 'read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);
      const page = (await browser.follow(await browser.get(url.href), base)) as Response;
      const action = /action="([^"]+\/confirm)"/.exec(await page.text())![1]!;
      const bad = await browser.post(new URL(action, base).href, {
        api_key: 'svc_pk_not_a_key_of_anyone_at_all_000000000000',
        scope: 'read',
      });
      return { verifier: '', status: bad.status, html: await bad.text() };
    })();
    expect(rest.status).to.equal(401);
    expect(rest.html).to.contain('role="alert"');

    const denied = await authorize(publicClient, 'read', 'deny');
    expect((denied.end as URL).searchParams.get('error')).to.equal('access_denied');
  });

  it('requires PKCE with S256', async () => {
    const url = new URL(meta.authorization_endpoint);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: publicClient,
      redirect_uri: REDIRECT,
      scope: 'read',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'plain',
    }))
      url.searchParams.set(k, v);
    const plain = await fetch(url, { redirect: 'manual' });
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).to.equal('invalid_request');
    url.searchParams.delete('code_challenge');
    url.searchParams.delete('code_challenge_method');
    const none = await fetch(url, { redirect: 'manual' });
    expect(new URL(none.headers.get('location')!).searchParams.get('error')).to.equal('invalid_request');
  });

  it('client credentials: a client registered with an admin key acts for its project', async () => {
    const refused = await register({
      client_name: 'Robot',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    });
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.equal('invalid_client_metadata');
    expect(
      (await register({ grant_types: ['client_credentials'], response_types: [], redirect_uris: [] }, writeKey)).status,
    ).to.equal(403);

    const robot = await register(
      {
        client_name: 'Robot',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        svc_project_id: 'prj_forged',
      },
      project.key,
    );
    expect(robot.status, JSON.stringify(robot.body)).to.equal(201);
    expect(robot.body.svc_project_id).to.equal(project.projectId);
    const issued = await token(
      { grant_type: 'client_credentials', scope: 'read write' },
      basic(robot.body.client_id, robot.body.client_secret),
    );
    expect(issued.status, JSON.stringify(issued.body)).to.equal(200);
    expect(issued.body.refresh_token).to.equal(undefined);
    expect(claimsOf(issued.body.access_token)).to.include({
      project_id: project.projectId,
      client_id: robot.body.client_id,
      aud: `${base}/`,
    });
    expect(await tryDoors(t, issued.body.access_token)).to.deep.equal(ACCEPTED);
    const created = await t.request('POST', '/tests/cases', {
      key: issued.body.access_token,
      body: { title: 'by robot', steps: [] },
    });
    expect(created.status).to.equal(201);
    expect(created.body.projectId).to.equal(project.projectId);
    const wrongSecret = await token(
      { grant_type: 'client_credentials', scope: 'read' },
      basic(robot.body.client_id, 'nope'),
    );
    expect(wrongSecret.status).to.equal(401);

    const revoked = await form(
      meta.revocation_endpoint,
      { token: issued.body.access_token },
      basic(robot.body.client_id, robot.body.client_secret),
    );
    expect(revoked.status).to.equal(200);
    expect(await tryDoors(t, issued.body.access_token)).to.deep.equal(REFUSED);
  });

  it('rotates the signing key: the provider signs with the new key, old tokens verify until the old key is retired', async () => {
    const robot = await register(
      { client_name: 'Rotor', grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
      project.key,
    );
    const auth = basic(robot.body.client_id, robot.body.client_secret);
    const old = (await token({ grant_type: 'client_credentials', scope: 'read' }, auth)).body.access_token;
    const oldKid = headerOf(old).kid;
    const newKid = await t.service.oauth.server.rotateKeys();
    const fresh = (await token({ grant_type: 'client_credentials', scope: 'read' }, auth)).body.access_token;
    expect(headerOf(fresh).kid).to.equal(newKid).and.not.equal(oldKid);
    const jwks = await (await fetch(meta.jwks_uri)).json();
    expect(jwks.keys.map((k: any) => k.kid)).to.deep.equal([newKid, oldKid]);
    expect(await tryDoors(t, old)).to.deep.equal({ ...ACCEPTED, socket: 4403 });
    expect(await t.service.oauth.signingKeys.retire(oldKid)).to.deep.equal([oldKid]);
    expect(await tryDoors(t, old)).to.deep.equal(REFUSED);
    expect((await t.request('GET', '/tests/cases', { key: fresh })).status).to.equal(200);
  });
});
