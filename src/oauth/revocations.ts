// Whether an access token still stands. A JWT access token is not stored (the provider only signs
// it), so revocation is recorded here: the token itself (`oauth_revoked_tokens`, kept until it would
// have expired), or its grant (revoking a refresh token destroys the grant, and with it every access
// token of the grant), or its client (a deleted client's tokens all stop). One query per token use.

import type { AccessTokenClaims, TokenRevocations } from '../auth/tokens.js';
import type { Db } from '../db/connect.js';

export class Revocations implements TokenRevocations {
  constructor(private readonly db: Db) {}

  async isRevoked(claims: AccessTokenClaims): Promise<boolean> {
    const { rows } = await this.db.raw(
      `SELECT EXISTS (SELECT 1 FROM oauth_revoked_tokens WHERE jti = ?) AS token_revoked,
              NOT EXISTS (SELECT 1 FROM oauth_models WHERE model = 'Client' AND id = ?) AS client_gone,
              (?::text IS NOT NULL AND NOT EXISTS (
                 SELECT 1 FROM oauth_models WHERE model = 'Grant' AND id = ?::text AND (expires_at IS NULL OR expires_at > now())
              )) AS grant_gone`,
      [claims.jti, claims.clientId, claims.grantId ?? null, claims.grantId ?? null],
    );
    const row = rows[0];
    return Boolean(row.token_revoked || row.client_gone || row.grant_gone);
  }

  /** Revokes one access token until it would have expired (`exp`, seconds since the epoch). */
  async revoke(jti: string, exp: number): Promise<void> {
    await this.db('oauth_revoked_tokens')
      .insert({ jti, expires_at: new Date(exp * 1000) })
      .onConflict('jti')
      .ignore();
  }

  /** Forgets revocations of tokens that have expired anyway. */
  async sweep(): Promise<void> {
    await this.db('oauth_revoked_tokens').where('expires_at', '<', this.db.fn.now()).delete();
    await this.db('oauth_models').where('expires_at', '<', this.db.fn.now()).delete();
  }
}
