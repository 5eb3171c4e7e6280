// API keys: `svc_pk_` + 43 random characters, stored only as a SHA-256 hash.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { newId } from '../ids.js';
import type { Principal, Scope } from './principal.js';

export const KEY_PREFIX = 'svc_pk_';

export function generateSecret(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  projectId: string;
  name: string;
  scope: Scope;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  tenant_id: string;
  project_id: string;
  name: string;
  scope: Scope;
  key_prefix: string;
  created_at: Date;
  revoked_at: Date | null;
}

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    name: row.name,
    scope: row.scope,
    prefix: row.key_prefix,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

export async function createKey(
  db: Db,
  owner: { tenantId: string; projectId: string },
  input: { name: string; scope: Scope; secret?: string },
): Promise<{ key: ApiKeyRecord; secret: string }> {
  const secret = input.secret ?? generateSecret();
  const [row] = await db('api_keys')
    .insert({
      id: newId('key'),
      tenant_id: owner.tenantId,
      project_id: owner.projectId,
      name: input.name,
      scope: input.scope,
      key_hash: hashSecret(secret),
      key_prefix: secret.slice(0, KEY_PREFIX.length + 4),
    })
    .returning('*');
  return { key: toApiKey(row), secret };
}

/** The principal a secret stands for, or null when it is unknown, revoked or its project is gone. */
export async function authenticate(db: Db, secret: string): Promise<Principal | null> {
  if (!secret.startsWith(KEY_PREFIX)) return null;
  return lookup(db, hashSecret(secret));
}

async function lookup(db: Db, keyHash: string): Promise<Principal | null> {
  const row = await db('api_keys as k')
    .join('projects as p', 'p.id', 'k.project_id')
    .where('k.key_hash', keyHash)
    .whereNull('k.revoked_at')
    .where('p.status', 'active')
    .first('k.id', 'k.tenant_id', 'k.project_id', 'k.scope');
  if (!row) return null;
  return { keyId: row.id, tenantId: row.tenant_id, projectId: row.project_id, scope: row.scope };
}

/**
 * authenticate() with the principals of recently used keys kept for `ttlMs`, so that a REST request
 * or an OTP handshake costs no query for its key (measured by the benchmarks: the query was a third
 * of the work of GET /otp/runs/:id). Revocation must still work at once: the service calls
 * invalidate() when a key is revoked here and when another process's revoke notice arrives, and a
 * lookup that was in flight during an invalidation is not kept. Anything else that ends a key (its
 * project no longer active) takes effect within ttlMs. Unknown secrets are never kept.
 */
export class KeyCache {
  private readonly entries = new Map<string, { principal: Principal; expires: number }>();
  /** Bumped by every invalidation; a lookup started under an older epoch is not cached. */
  private epoch = 0;

  constructor(
    private readonly db: Db,
    private readonly options: { ttlMs: number; maxEntries: number },
  ) {}

  async authenticate(secret: string): Promise<Principal | null> {
    if (!secret.startsWith(KEY_PREFIX)) return null;
    const keyHash = hashSecret(secret);
    const hit = this.entries.get(keyHash);
    if (hit && hit.expires > Date.now()) return hit.principal;
    const epoch = this.epoch;
    const principal = await lookup(this.db, keyHash);
    if (!principal || epoch !== this.epoch || this.options.ttlMs <= 0) {
      this.entries.delete(keyHash);
      return principal;
    }
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { principal, expires: Date.now() + this.options.ttlMs });
    return principal;
  }

  /** A key was revoked: forget it now (and any lookup still in flight). */
  invalidate(keyId: string): void {
    this.epoch++;
    for (const [keyHash, entry] of this.entries) if (entry.principal.keyId === keyId) this.entries.delete(keyHash);
  }
}
