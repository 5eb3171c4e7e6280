// Sign in from the options page: OAuth 2.1 authorization code with PKCE against the real service,
// through chrome.identity.launchWebAuthFlow in headless Chromium. The extension registers its client
// (DCR, redirect https://<id>.chromiumapp.org/), the browser shows the service's consent page, which
// the test fills as a person would (the project's key, Authorize); the extension exchanges the code,
// stores the access token as `token` and its session connects with it; refreshed, the new token
// connects a new session. Deny leaves no token.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startTestService, type TestService } from '../support/service.js';
import { type ExtensionBrowser, launchExtension } from './harness.js';

describe('the extension signs in with the service (OAuth 2.1, PKCE, launchWebAuthFlow)', function () {
  this.timeout(60_000);
  let t: TestService;
  let ext: ExtensionBrowser;
  let key: string;
  let projectId: string;
  let options: Page;

  before(async () => {
    t = await startTestService();
    ({ key, projectId } = await t.newProject('write'));
    ext = await launchExtension({});
    const extensionId = new URL((await ext.worker()).url()).host;
    options = await ext.context.newPage();
    await options.goto(`chrome-extension://${extensionId}/options.html`);
  });
  after(async () => {
    await ext?.close();
    await t?.stop();
  });

  const stored = async () =>
    (await ext.worker()).evaluate(() => (globalThis as any).chrome.storage.local.get(null)) as Promise<
      Record<string, any>
    >;

  /** Clicks Sign in and answers the consent page the browser opens for it. */
  async function consent(answer: 'Authorize' | 'Deny'): Promise<void> {
    await options.fill('#serviceUrl', t.service.restUrl);
    const authPage = ext.context.waitForEvent('page');
    await options.click('#signin');
    const page = await authPage;
    await page.waitForLoadState('domcontentloaded');
    if (answer === 'Authorize') await page.getByLabel('API key of the project').fill(key);
    await page.getByRole('button', { name: answer }).click();
  }

  it('refuses nothing silently: Deny says so and stores no token', async () => {
    await consent('Deny');
    await options.locator('#signin-status', { hasText: 'Not signed in' }).waitFor();
    expect(await options.locator('#signin-status').textContent()).to.contain('sign-in was refused');
    expect((await stored()).token).to.equal(undefined);
  });

  it('registers a client, exchanges the code with PKCE, stores the access token, and the session connects with it', async () => {
    await consent('Authorize');
    await options.locator('#signin-status', { hasText: /^(Signed in|Not signed in.*)$/ }).waitFor();
    expect(await options.locator('#signin-status').textContent()).to.equal('Signed in');
    const saved = await stored();
    expect(saved.serviceUrl).to.equal(t.service.restUrl);
    expect(saved.token).to.match(/^ey[\w-]+\.[\w-]+\.[\w-]+$/); // a JWT access token, not a key
    expect(saved.oauthRefreshToken).to.be.a('string');
    expect(saved.tokenExpiresAt).to.be.greaterThan(Date.now());
    expect(saved.oauthClient.redirectUri).to.match(/^https:\/\/[a-p]{32}\.chromiumapp\.org\/$/);
    const claims = JSON.parse(Buffer.from(saved.token.split('.')[1], 'base64url').toString());
    expect(claims).to.include({ project_id: projectId, scope: 'write', client_id: saved.oauthClient.clientId });

    const sessionId = await ext.sessionId();
    const sessions = await t.request('GET', '/otp/sessions', { key });
    expect(sessions.body.items.map((s: any) => s.id)).to.include(sessionId);

    // Refreshed (as a refused or expiring token is before reconnecting): a new token, a rotated refresh
    // token, and a new session with it.
    expect(await (await ext.worker()).evaluate(() => (globalThis as any).otpExtension.refreshToken())).to.equal(true);
    const refreshed = await stored();
    expect(refreshed.token).to.match(/^ey/).and.not.equal(saved.token);
    expect(refreshed.oauthRefreshToken).to.be.a('string').and.not.equal(saved.oauthRefreshToken);
    const next = await ext.sessionId(sessionId);
    expect(next).to.not.equal(sessionId);
  });
});
