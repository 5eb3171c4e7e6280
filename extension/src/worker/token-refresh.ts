// A signed-in extension's access token, refreshed (docs/extension.md "Signing in"): an open socket
// stays open when its token expires (the service checks a token when the socket opens), so the
// token is refreshed only when the worker is about to connect with it: when no session is
// connected and the token expires within 5 minutes, or the service refused it (close 4401). Storing
// the new token is a settings change: the worker starts a new session with it.
import { keep, metadataOf, tokenRequest } from '../options/signin.js';
import type { Settings } from './settings.js';

const EARLY_MS = 5 * 60_000;

interface Stored {
  oauthRefreshToken?: string | null;
  tokenExpiresAt?: number | null;
  oauthClient?: { serviceUrl: string; clientId: string };
}

/**
 * Refreshes the access token when it was got by signing in with this service and expires soon (or
 * at once when `force`); true when a new one was stored.
 */
export async function refreshToken(settings: Settings, force = false): Promise<boolean> {
  const stored = (await chrome.storage.local.get(['oauthRefreshToken', 'tokenExpiresAt', 'oauthClient'])) as Stored;
  const { oauthRefreshToken, tokenExpiresAt, oauthClient } = stored;
  if (!oauthRefreshToken || !settings.serviceUrl || oauthClient?.serviceUrl !== settings.serviceUrl) return false;
  if (!force && (tokenExpiresAt ?? 0) - Date.now() > EARLY_MS) return false;
  const meta = await metadataOf(settings.serviceUrl);
  await keep(
    await tokenRequest(meta.token_endpoint, {
      grant_type: 'refresh_token',
      refresh_token: oauthRefreshToken,
      client_id: oauthClient.clientId,
    }),
  );
  return true;
}
