// OAuth 2.1 under /oauth: oidc-provider mounted with koa-mount, its state in PostgreSQL, plus what it
// does not do itself: RFC 8414 metadata at the path-inserted well-known address, the consent page,
// registration bound to a project by an admin key, and revocation of JWT access tokens. The provider
// is rebuilt when another process rotates the signing keys (checked every `keysRefreshMs`).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import { KEY_PREFIX } from '../auth/keys.js';
import type { Principal } from '../auth/principal.js';
import { type AccessTokenClaims, looksLikeJwt } from '../auth/tokens.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import { consentMiddleware } from './consent.js';
import { buildProvider } from './provider.js';
import type { Revocations } from './revocations.js';
import type { SigningKeys } from './signing-keys.js';

export const OAUTH_PREFIX = '/oauth';
export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';

export interface OAuthDeps {
  db: Db;
  log: Logger;
  signingKeys: SigningKeys;
  revocations: Revocations;
  ttl: { accessTokenSec: number; refreshTokenSec: number };
  keysRefreshMs: number;
  principalOfKeyId(keyId: string): Promise<Principal | null>;
  authenticateKey(secret: string): Promise<Principal | null>;
  /** A JWT access token's claims when it is valid (signature, issuer, audience, expiry), else null. */
  verifiedClaims(token: string): Promise<AccessTokenClaims | null>;
}

/** The secrets that sign the provider's cookies, the same in every process (made once, kept in PostgreSQL). */
export async function cookieKeys(db: Db): Promise<string[]> {
  await db('oauth_secrets')
    .insert({ name: 'cookie-key', value: randomBytes(32).toString('base64url') })
    .onConflict('name')
    .ignore();
  return [(await db('oauth_secrets').where('name', 'cookie-key').first('value')).value];
}

export class OAuthServer {
  private provider?: Provider;
  private mounted?: Koa.Middleware;
  private keysVersion = '';
  private checkedAt = 0;
  private issuer = '';
  private audience = '';
  private cookies: string[] = [];

  constructor(private readonly deps: OAuthDeps) {}

  /** Builds the provider once the service's address is known. */
  async start(issuer: string, audience: string, cookies: string[]): Promise<void> {
    Object.assign(this, { issuer, audience, cookies });
    await this.rebuild();
  }

  private async rebuild(): Promise<void> {
    const { keys, version } = await this.deps.signingKeys.signingJwks();
    const provider = buildProvider({
      db: this.deps.db,
      issuer: this.issuer,
      audience: this.audience,
      jwks: keys,
      cookieKeys: this.cookies,
      ttl: this.deps.ttl,
      principalOfKeyId: this.deps.principalOfKeyId,
      interactionPath: (uid) => `${OAUTH_PREFIX}/interaction/${uid}`,
    });
    provider.on('server_error', (_ctx, err) => this.deps.log.error('OAuth provider failed', { err }));
    this.provider = provider;
    // The provider is itself a Koa app.
    this.mounted = mount(OAUTH_PREFIX, provider as unknown as Koa);
    this.keysVersion = version;
    this.checkedAt = Date.now();
  }

  /** A key rotated here or by another process: the next request here signs with the new key. */
  private async current(): Promise<Koa.Middleware> {
    if (Date.now() - this.checkedAt >= this.deps.keysRefreshMs) {
      this.checkedAt = Date.now();
      if ((await this.deps.signingKeys.version()) !== this.keysVersion) await this.rebuild();
    }
    return this.mounted!;
  }

  /** Rotates the signing key and signs with the new one here at once. */
  async rotateKeys(): Promise<string> {
    const kid = await this.deps.signingKeys.rotate();
    await this.rebuild();
    return kid;
  }

  middleware(): Koa.Middleware {
    const consent = consentMiddleware({
      provider: () => this.provider!,
      authenticateKey: this.deps.authenticateKey,
      audience: () => this.audience,
    });
    return async (ctx, next) => {
      if (!this.provider) return next();
      // RFC 8414: the metadata of issuer https://host/oauth lives at /.well-known/oauth-authorization-server/oauth.
      if (
        (ctx.path === `${AS_METADATA_PATH}${OAUTH_PREFIX}` || ctx.path === AS_METADATA_PATH) &&
        ctx.method === 'GET'
      ) {
        ctx.path = `${OAUTH_PREFIX}/.well-known/openid-configuration`;
        return (await this.current())(ctx, next);
      }
      if (ctx.path !== OAUTH_PREFIX && !ctx.path.startsWith(`${OAUTH_PREFIX}/`)) return next();
      if (ctx.path.startsWith(`${OAUTH_PREFIX}/interaction/`)) return consent(ctx, next);
      if (await this.answeredHere(ctx)) return;
      return (await this.current())(ctx, next);
    };
  }

  /** Registration with an API key and revocation of a JWT are the service's own: true when answered here. */
  private async answeredHere(ctx: Koa.Context): Promise<boolean> {
    if (ctx.method !== 'POST') return false;
    if (ctx.path === `${OAUTH_PREFIX}/reg`) return this.registrar(ctx);
    if (ctx.path === `${OAUTH_PREFIX}/token/revocation`) return this.revokeJwt(ctx);
    return false;
  }

  /**
   * A registration carrying an API key: it must be an admin key, and the client is bound to its
   * project (client credentials act for that project). Answers true when it refused the request.
   */
  private async registrar(ctx: Koa.Context): Promise<boolean> {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    if (!match || !match[1]!.startsWith(KEY_PREFIX)) return false;
    const principal = await this.deps.authenticateKey(match[1]!);
    const error = !principal
      ? 'the API key is unknown or revoked'
      : principal.scope !== 'admin'
        ? 'registering a client for a project needs an admin key'
        : undefined;
    if (error) {
      ctx.status = principal ? 403 : 401;
      ctx.body = { error: 'invalid_token', error_description: error };
      return true;
    }
    ctx.state.registrar = principal;
    delete ctx.req.headers.authorization;
    return false;
  }

  /**
   * RFC 7009 for JWT access tokens, which the provider refuses to revoke (it does not store them):
   * the client authenticates as at the token endpoint, the token must be its own, and its id is
   * recorded as revoked until it expires. Other tokens (refresh tokens) go to the provider.
   */
  private async revokeJwt(ctx: Koa.Context): Promise<boolean> {
    const raw = await readBody(ctx);
    const form = new URLSearchParams(raw);
    const token = form.get('token') ?? '';
    if (!looksLikeJwt(token)) {
      // Hand the provider the body already read (it parses a string body as its own).
      (ctx.req as { body?: unknown }).body = raw;
      return false;
    }
    let clientId = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    const basic = /^Basic\s+(\S+)$/i.exec(ctx.get('authorization'));
    if (basic) {
      const [id, pass] = Buffer.from(basic[1]!, 'base64').toString().split(':');
      clientId = decodeURIComponent(id ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    const client = clientId ? await this.provider!.Client.find(clientId) : undefined;
    const authenticated =
      client &&
      (client.tokenEndpointAuthMethod === 'none'
        ? !secret
        : Boolean(secret && client.clientSecret && safeEqual(secret, client.clientSecret)));
    ctx.set('Cache-Control', 'no-store');
    if (!authenticated) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client', error_description: 'client authentication failed' };
      return true;
    }
    const claims = await this.deps.verifiedClaims(token);
    if (claims && claims.clientId === client.clientId) await this.deps.revocations.revoke(claims.jti, claims.exp);
    ctx.status = 200;
    ctx.body = '';
    return true;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readBody(ctx: Koa.Context): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
