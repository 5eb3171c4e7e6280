// The keys that sign access tokens, kept in PostgreSQL so that every process signs and verifies with
// the same ones. One key is `active` (it signs); `rotate()` makes a new active key and turns the old
// one `retiring`: it no longer signs but still verifies, so tokens already out keep working until
// `retire()` (or until they expire: a retiring key older than the longest token lifetime is retired by
// `retireExpired`). A `retired` key verifies nothing. Private keys are stored as JWKs: the database is
// as secret as the keys (docs/agents.md).
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Db } from '../db/connect.js';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  status: 'active' | 'retiring' | 'retired';
  createdAt: string;
  rotatedAt: string | null;
  retiredAt: string | null;
}

interface KeyRow {
  kid: string;
  private_jwk: JWK;
  public_jwk: JWK;
  status: SigningKey['status'];
  created_at: Date;
  rotated_at: Date | null;
  retired_at: Date | null;
}

async function newKeyPair(): Promise<{ kid: string; privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = `sk_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  const meta = { kid, alg: SIGNING_ALG, use: 'sig' };
  return {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), ...meta },
    publicJwk: { ...(await exportJWK(publicKey)), ...meta },
  };
}

function view(row: KeyRow): SigningKey {
  return {
    kid: row.kid,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    rotatedAt: row.rotated_at?.toISOString() ?? null,
    retiredAt: row.retired_at?.toISOString() ?? null,
  };
}

export class SigningKeys {
  private readonly retiredListeners: Array<() => void> = [];

  constructor(private readonly db: Db) {}

  /** Called after this process retires keys (verifiers forget them at once; other processes within their cache time). */
  onRetired(listener: () => void): void {
    this.retiredListeners.push(listener);
  }

  private retired(kids: string[]): string[] {
    if (kids.length) for (const listener of this.retiredListeners) listener();
    return kids;
  }

  /** Makes the first key on a fresh database (several processes may start at once). */
  async ensure(): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['oauth:signing-keys']);
      const active = await trx('oauth_signing_keys').where('status', 'active').first('kid');
      if (!active) await this.insertActive(trx);
    });
  }

  /** A new active key; the previous one keeps verifying (retiring) until retired. Answers the new kid. */
  async rotate(): Promise<string> {
    return this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['oauth:signing-keys']);
      await trx('oauth_signing_keys')
        .where('status', 'active')
        .update({ status: 'retiring', rotated_at: trx.fn.now() });
      return this.insertActive(trx);
    });
  }

  /** Stops keys from verifying: the given one, or every retiring key. Answers the kids retired. */
  async retire(kid?: string): Promise<string[]> {
    const query = this.db('oauth_signing_keys').where('status', 'retiring');
    if (kid) query.andWhere('kid', kid);
    const rows = await query.update({ status: 'retired', retired_at: this.db.fn.now() }).returning('kid');
    return this.retired(rows.map((r) => r.kid));
  }

  /** Retiring keys rotated out longer ago than every token they signed can live. */
  async retireExpired(maxTokenLifetimeSec: number): Promise<string[]> {
    return this.db('oauth_signing_keys')
      .where('status', 'retiring')
      .andWhere('rotated_at', '<', this.db.raw(`now() - make_interval(secs => ?)`, [maxTokenLifetimeSec + 60]))
      .update({ status: 'retired', retired_at: this.db.fn.now() })
      .returning('kid')
      .then((rows) => this.retired(rows.map((r) => r.kid)));
  }

  async list(): Promise<SigningKey[]> {
    const rows: KeyRow[] = await this.db('oauth_signing_keys').orderBy('created_at', 'desc').select('*');
    return rows.map(view);
  }

  /** The private keys for the provider: the active one first (it signs), then the retiring ones. */
  async signingJwks(): Promise<{ keys: JWK[]; version: string }> {
    const rows: KeyRow[] = await this.db('oauth_signing_keys')
      .whereIn('status', ['active', 'retiring'])
      .orderByRaw(`status = 'active' DESC, created_at DESC`)
      .select('*');
    return { keys: rows.map((r) => r.private_jwk), version: rows.map((r) => `${r.kid}:${r.status}`).join(',') };
  }

  /** What identifies the current key set: a process rebuilds its provider when this changes. */
  async version(): Promise<string> {
    const rows: Array<Pick<KeyRow, 'kid' | 'status'>> = await this.db('oauth_signing_keys')
      .whereIn('status', ['active', 'retiring'])
      .orderByRaw(`status = 'active' DESC, created_at DESC`)
      .select('kid', 'status');
    return rows.map((r) => `${r.kid}:${r.status}`).join(',');
  }

  /** The public key that may verify a token signed with `kid`, or null once it is retired. */
  async verificationKey(kid: string): Promise<JWK | null> {
    const row = await this.db('oauth_signing_keys')
      .where({ kid })
      .whereIn('status', ['active', 'retiring'])
      .first('public_jwk');
    return row?.public_jwk ?? null;
  }

  private async insertActive(trx: Db): Promise<string> {
    const { kid, privateJwk, publicJwk } = await newKeyPair();
    await trx('oauth_signing_keys').insert({
      kid,
      alg: SIGNING_ALG,
      private_jwk: privateJwk,
      public_jwk: publicJwk,
      status: 'active',
    });
    return kid;
  }
}
