// "Sign in" (docs/extension.md): OAuth 2.1 authorization code with PKCE against the service's own
// authorization server (/oauth, docs/agents.md), through chrome.identity.launchWebAuthFlow. The
// client is the one a policy declares (`oauthClientId`), else one registered here by dynamic
// registration (RFC 7591) as a public client whose redirect URI is the extension's
// https://<id>.chromiumapp.org/, kept per service address. The access token goes in `token` (what
// the worker connects with); the refresh token and the expiry beside it (the worker refreshes it,
// worker/token-refresh.ts).

import { codeOf } from './sign-in-answer.js';

interface Metadata {
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

/** Where the signed-in state lives in chrome.storage.local, beside `token`. */
export const OAUTH_KEYS = ['oauthClient', 'oauthRefreshToken', 'tokenExpiresAt'] as const;

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const randomText = (size = 32) => base64url(crypto.getRandomValues(new Uint8Array(size)));

async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

export async function metadataOf(serviceUrl: string): Promise<Metadata> {
  const res = await fetch(`${serviceUrl}/.well-known/oauth-authorization-server/oauth`).catch((err: Error) => {
    throw new Error(`the service at ${serviceUrl} cannot be reached (${err.message}): check its address`);
  });
  if (!res.ok) throw new Error(`the service publishes no OAuth metadata (${res.status}): sign in with an API key`);
  return (await res.json()) as Metadata;
}

/** The declared client, else the one registered earlier for this service, else a new registration. */
async function clientOf(serviceUrl: string, meta: Metadata, redirectUri: string, declared?: string): Promise<string> {
  if (declared) return declared;
  const { oauthClient } = (await chrome.storage.local.get('oauthClient')) as {
    oauthClient?: { serviceUrl: string; clientId: string; redirectUri: string };
  };
  if (oauthClient?.serviceUrl === serviceUrl && oauthClient.redirectUri === redirectUri) return oauthClient.clientId;
  if (!meta.registration_endpoint) throw new Error('the service registers no clients: set oauthClientId');
  const res = await fetch(meta.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'OTP browser extension',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  const body = (await res.json().catch(() => ({}))) as { client_id?: string; error_description?: string };
  if (res.status !== 201 || !body.client_id)
    throw new Error(`client registration answered ${res.status}: ${body.error_description ?? 'no client_id'}`);
  await chrome.storage.local.set({ oauthClient: { serviceUrl, clientId: body.client_id, redirectUri } });
  return body.client_id;
}

export async function tokenRequest(endpoint: string, fields: Record<string, string>): Promise<TokenAnswer> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  const body = (await res.json().catch(() => ({}))) as TokenAnswer;
  if (!res.ok || !body.access_token)
    throw new Error(`the token endpoint answered ${res.status}: ${body.error_description ?? body.error ?? 'no token'}`);
  return body;
}

export async function keep(answer: TokenAnswer): Promise<void> {
  await chrome.storage.local.set({
    token: answer.access_token,
    oauthRefreshToken: answer.refresh_token ?? null,
    tokenExpiresAt: answer.expires_in ? Date.now() + answer.expires_in * 1000 : null,
  });
}

/** Signs in to the service and stores the access token as `token`. */
export async function signIn(serviceUrl: string, declaredClientId?: string): Promise<void> {
  const meta = await metadataOf(serviceUrl);
  const redirectUri = chrome.identity.getRedirectURL();
  const clientId = await clientOf(serviceUrl, meta, redirectUri, declaredClientId);
  const verifier = randomText();
  const state = randomText(16);
  const url = new URL(meta.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'write',
    state,
    code_challenge: await challengeOf(verifier),
    code_challenge_method: 'S256',
    resource: `${serviceUrl}/`,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const redirected = await chrome.identity.launchWebAuthFlow({ url: url.href, interactive: true });
  if (!redirected) throw new Error('sign-in was closed');
  const code = codeOf(redirected, state);
  await keep(
    await tokenRequest(meta.token_endpoint, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    }),
  );
}
