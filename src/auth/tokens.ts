// OAuth access tokens as principals. src/oauth/ issues JWT access tokens (RFC 9068, `typ: at+jwt`)
// bound to a tenant, a project, a scope and the key that vouched for them; this verifies one with
// jose (issuer, audience, type, expiry, signature by a key kept in PostgreSQL) and answers the same
// principal that key would, with the token's scope capped by the key's. The keys and the revocation
// state are read through ports the oauth room implements (it owns those tables), wired in service.ts.
import { importJWK, type JWK, type JWTHeaderParameters, jwtVerify } from 'jose';
import { highestScope, lowerScope, type Principal, type Scope } from './principal.js';

/** The claims this service adds to the registered ones (iss, aud, exp, jti, client_id, scope). */
export const TokenClaim = {
  tenant: 'tenant_id',
  project: 'project_id',
  key: 'key_id',
  grant: 'grant_id',
} as const;

export interface AccessTokenClaims {
  jti: string;
  clientId: string;
  /** The grant of a code or refresh flow; absent for client credentials. */
  grantId?: string;
  keyId: string;
  tenantId: string;
  projectId: string;
  scope: Scope;
  /** Seconds since the epoch. */
  exp: number;
}

export interface TokenKeySource {
  /** The public JWK of a signing key that may still verify (active or retiring), or null (unknown, retired). */
  verificationKey(kid: string): Promise<JWK | null>;
}

export interface TokenRevocations {
  /** True when the token itself, its grant or its client was revoked or deleted. */
  isRevoked(claims: AccessTokenClaims): Promise<boolean>;
}

export interface TokenVerifierDeps {
  /** Known once the REST listener is bound (the issuer may be derived from its port). */
  issuer(): string;
  audience(): string;
  keys: TokenKeySource;
  revocations: TokenRevocations;
  principalOfKeyId(keyId: string): Promise<Principal | null>;
  /** How long an imported verification key is kept before the store is asked again. */
  keyCacheMs: number;
}

/** A compact JWS: three base64url parts, the header a JSON object. */
export function looksLikeJwt(credential: string): boolean {
  return /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(credential);
}

export class TokenVerifier {
  private readonly keys = new Map<string, { key: CryptoKey | Uint8Array; expires: number }>();

  constructor(private readonly deps: TokenVerifierDeps) {}

  /** The claims of a valid, unrevoked token, or null: any failure is the same refusal as a bad key. */
  async claims(token: string): Promise<AccessTokenClaims | null> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, (header) => this.key(header), {
        issuer: this.deps.issuer(),
        audience: this.deps.audience(),
        typ: 'at+jwt',
        algorithms: ['ES256'],
        requiredClaims: ['exp', 'jti', 'client_id'],
      }));
    } catch {
      return null;
    }
    const scope = highestScope(String(payload.scope ?? '').split(' '));
    const str = (name: string) => (typeof payload[name] === 'string' ? (payload[name] as string) : undefined);
    const claims = {
      jti: str('jti'),
      clientId: str('client_id'),
      grantId: str(TokenClaim.grant),
      keyId: str(TokenClaim.key),
      tenantId: str(TokenClaim.tenant),
      projectId: str(TokenClaim.project),
      exp: payload.exp as number,
      scope,
    };
    if (!claims.jti || !claims.clientId || !claims.keyId || !claims.tenantId || !claims.projectId || !scope)
      return null;
    const full = claims as AccessTokenClaims;
    return (await this.deps.revocations.isRevoked(full)) ? null : full;
  }

  /** The principal a token stands for: its key's, narrowed to the token's scope; null when refused. */
  async principal(token: string): Promise<Principal | null> {
    const claims = await this.claims(token);
    if (!claims) return null;
    const key = await this.deps.principalOfKeyId(claims.keyId);
    if (!key || key.projectId !== claims.projectId || key.tenantId !== claims.tenantId) return null;
    return { ...key, scope: lowerScope(claims.scope, key.scope), tokenId: claims.jti, clientId: claims.clientId };
  }

  /** A key was retired here: forget it at once (other processes within keyCacheMs). */
  forgetKeys(): void {
    this.keys.clear();
  }

  private async key(header: JWTHeaderParameters): Promise<CryptoKey | Uint8Array> {
    const kid = header.kid;
    if (!kid) throw new Error('no kid');
    const hit = this.keys.get(kid);
    if (hit && hit.expires > Date.now()) return hit.key;
    const jwk = await this.deps.keys.verificationKey(kid);
    if (!jwk) {
      this.keys.delete(kid);
      throw new Error('unknown key');
    }
    const key = await importJWK(jwk, 'ES256');
    this.keys.set(kid, { key, expires: Date.now() + this.deps.keyCacheMs });
    return key;
  }
}
