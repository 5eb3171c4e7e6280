// Credentials as the service uses them: API keys through their cache (told of revocations and
// projects' changes by notices), OAuth access tokens signed with keys kept in PostgreSQL and accepted
// wherever a key is, and the OAuth server. The issuer and the audience are known once the REST
// listener is bound (they may be derived from its port).
import { KeyCache, principalOfKeyId } from '../auth/keys.js';
import { Principals } from '../auth/principals.js';
import { TokenVerifier } from '../auth/tokens.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { cookieKeys, OAuthServer } from '../oauth/index.js';
import { Revocations } from '../oauth/revocations.js';
import { SigningKeys } from '../oauth/signing-keys.js';
import { tenancy } from '../platform/tenancy.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

export interface Credentials {
  keys: KeyCache;
  principals: Principals;
  oauth: OAuthServer;
  signingKeys: SigningKeys;
  revocations: Revocations;
  cookieKeys: string[];
  issuer(): string;
  audience(): string;
}

export async function credentials(config: Config, database: Database, baseUrl: () => string): Promise<Credentials> {
  const { db, quietLog: log, notifier } = database;
  const keys = new KeyCache(db, tenancy, { ttlMs: config.keyCacheMs, maxEntries: 10_000 });
  notifier.on('revoke', (notice) => keys.invalidate(notice.keyId));
  notifier.on('project', (notice) => keys.invalidateProject(notice.projectId));
  notifier.onReconnected(() => keys.clear());
  const signingKeys = new SigningKeys(db);
  await signingKeys.ensure();
  const revocations = new Revocations(db);
  const issuer = () => `${baseUrl()}/oauth`;
  const audience = () => `${baseUrl()}/`;
  const ofKeyId = (keyId: string) => principalOfKeyId(db, tenancy, keyId);
  const tokens = new TokenVerifier({
    issuer,
    audience,
    keys: signingKeys,
    revocations,
    principalOfKeyId: ofKeyId,
    keyCacheMs: config.keyCacheMs,
  });
  signingKeys.onRetired(() => tokens.forgetKeys());
  const oauth = new OAuthServer({
    db,
    log,
    signingKeys,
    revocations,
    ttl: { accessTokenSec: config.oauth.accessTokenTtlSec, refreshTokenSec: config.oauth.refreshTokenTtlSec },
    keysRefreshMs: config.oauth.keysRefreshMs,
    principalOfKeyId: ofKeyId,
    authenticateKey: async (secret) => keys.authenticate(secret),
    verifiedClaims: (token) => tokens.claims(token),
  });
  const principals = new Principals(keys, tokens);
  return { keys, principals, oauth, signingKeys, revocations, cookieKeys: await cookieKeys(db), issuer, audience };
}

/** The OAuth server, once the issuer is known; expired provider rows and revocations swept every minute. */
export async function startOAuth(config: Config, auth: Credentials, log: Logger, teardown: Teardown): Promise<void> {
  await auth.oauth.start(auth.issuer(), auth.audience(), auth.cookieKeys);
  // Expired provider rows and revocations of tokens that expired anyway.
  const sweep = setInterval(() => {
    auth.revocations.sweep().catch((err) => log.error('OAuth sweep failed', { err }));
    auth.signingKeys
      .retireExpired(config.oauth.accessTokenTtlSec)
      .catch((err) => log.error('retiring signing keys failed', { err }));
  }, 60_000);
  sweep.unref();
  teardown.add('OAuth sweep', () => clearInterval(sweep));
}
