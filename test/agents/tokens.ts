// Access tokens made the way the provider makes them, signed with the service's own key from the
// database: to test what the verifier refuses (expired, wrong audience or issuer, tampered) without
// waiting for a token to expire.
import { importJWK, type JWK, SignJWT } from 'jose';
import type { TestService } from '../support/service.js';

export interface TokenOptions {
  keyId: string;
  tenantId: string;
  projectId: string;
  clientId: string;
  scope?: string;
  grantId?: string;
  jti?: string;
  exp?: number;
  iss?: string;
  aud?: string;
  typ?: string;
  kid?: string;
}

export async function signToken(t: TestService, o: TokenOptions): Promise<string> {
  const row = o.kid
    ? await t.service.db('oauth_signing_keys').where('kid', o.kid).first('private_jwk')
    : await t.service.db('oauth_signing_keys').where('status', 'active').first('private_jwk');
  const jwk = row.private_jwk as JWK;
  const key = await importJWK(jwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    scope: o.scope ?? 'write',
    client_id: o.clientId,
    tenant_id: o.tenantId,
    project_id: o.projectId,
    key_id: o.keyId,
    ...(o.grantId ? { grant_id: o.grantId } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: o.typ ?? 'at+jwt', kid: jwk.kid })
    .setIssuer(o.iss ?? t.service.oauth.issuer)
    .setAudience(o.aud ?? t.service.oauth.audience)
    .setSubject(o.keyId)
    .setJti(o.jti ?? `jti_${Math.random().toString(36).slice(2)}`)
    .setIssuedAt(now)
    .setExpirationTime(o.exp ?? now + 600)
    .sign(key);
}

/** The same token with one character of its payload changed: the signature no longer matches. */
export function tamper(token: string): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  claims.scope = 'admin';
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}
