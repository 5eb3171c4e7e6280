// An MCP client configured with only the service's URL: the SDK follows the 401's WWW-Authenticate to
// the protected-resource metadata, then to the authorization server's metadata, registers itself,
// sends the person to the consent page (driven here over HTTP) and runs a test with its token.

import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'chai';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { Browser } from './oauth-helpers.js';

const REDIRECT = 'http://127.0.0.1:9/mcp-callback';

class TestAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('MCP: the SDK client discovers OAuth from the service URL alone', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  it('registers, gets consent, gets a token and runs a test through svc_otp_run', async () => {
    const project = await t.newProject('admin');
    const base = t.service.restUrl;
    const auth = new TestAuthProvider();
    const url = new URL(`${base}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: auth });
    const client = new Client({ name: 'sdk-agent', version: '0.0.1' });
    let refused: unknown;
    try {
      await client.connect(first);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(UnauthorizedError);
    expect(auth.info?.client_id, 'dynamic registration').to.be.a('string');
    const authorizationUrl = auth.authorizationUrl!;
    expect(authorizationUrl.href.startsWith(`${base}/oauth/`)).to.equal(true);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorizationUrl.searchParams.get('resource')).to.equal(`${base}/mcp`);

    // The person: opens the page, gives a write key of the project.
    const browser = new Browser();
    const page = (await browser.follow(await browser.get(authorizationUrl.href), base)) as Response;
    const action = /action="([^"]+\/confirm)"/.exec(await page.text())![1]!;
    const back = (await browser.follow(
      await browser.post(new URL(action, base).href, { api_key: project.key, scope: 'write' }),
      base,
    )) as URL;
    const code = back.searchParams.get('code')!;
    expect(code).to.be.a('string');
    await first.finishAuth(code);
    expect(auth.saved?.access_token).to.be.a('string');

    const agent = new Client({ name: 'sdk-agent', version: '0.0.1' });
    await agent.connect(new StreamableHTTPClientTransport(url, { authProvider: auth }));
    const created = await agent.callTool({
      name: 'svc_create_test_case',
      arguments: { title: 'From an agent', steps: [{ otp: { action: 'navigate', url: 'https://shop.test/' } }] },
    });
    expect(created.isError).to.not.equal(true);
    const executor = await TestExecutor.connect(t.otpUrl, { key: auth.saved!.access_token });
    await executor.hello();
    const running = agent.callTool({
      name: 'svc_otp_run',
      arguments: { testCaseIds: [(created.structuredContent as any).id], waitMs: 10_000 },
    });
    executor.result(await executor.next('step.exec'), 'pass');
    const result = (await running).structuredContent as any;
    expect(result.run.status).to.equal('passed');
    expect(result.failingSteps).to.deep.equal([]);
    executor.close();
    await agent.close();
  });
});
