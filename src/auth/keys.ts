// API keys: `svc_pk_` + 43 random characters, stored only as a SHA-256 hash.
import { hash, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { newId } from '../ids.js';
import { ApiKeyModel } from './api-key-model.js';
import type { Principal, Scope } from './principal.js';
import type { Tenancy } from './tenancy.js';

export const KEY_PREFIX = 'svc_pk_';

export function generateSecret(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  // One-shot hash: about half the cost of createHash().update().digest(), paid on every request.
  return hash('sha256', secret, 'hex');
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
  version: number;
}

/** The public record of a key: never its hash. */
export function toApiKey(key: ApiKeyModel): ApiKeyRecord {
  return {
    id: key.id,
    tenantId: key.tenantId,
    projectId: key.projectId,
    name: key.name,
    scope: key.scope,
    prefix: key.keyPrefix,
    createdAt: key.createdAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    version: key.version,
  };
}

export async function createKey(
  db: Db,
  owner: { tenantId: string; projectId: string },
  input: { name: string; scope: Scope; secret?: string },
): Promise<{ key: ApiKeyRecord; secret: string }> {
  const secret = input.secret ?? generateSecret();
  const key = await ApiKeyModel.query(db)
    .insert({
      id: newId('key'),
      tenantId: owner.tenantId,
      projectId: owner.projectId,
      name: input.name,
      scope: input.scope,
      keyHash: hashSecret(secret),
      keyPrefix: secret.slice(0, KEY_PREFIX.length + 4),
    })
    .returning('*');
  return { key: toApiKey(key), secret };
}

/**
 * Ids of every key of a project, revoked ones too: when the project is archived or deleted, the OTP
 * engine closes the executor sessions of each (a revoked key has none left; asking costs nothing).
 */
export function keyIdsOfProject(db: Db, projectId: string): Promise<string[]> {
  return db('api_keys').where('project_id', projectId).pluck('id');
}

/**
 * The principal a secret stands for, or null when it is unknown, revoked or its project is deleted.
 * Keys of an archived project still authenticate (reads work; writes are refused by the REST layer)
 * unless `activeOnly` asks for an active project (OTP sessions).
 */
export async function authenticate(
  db: Db,
  tenancy: Tenancy,
  secret: string,
  options: AuthOptions = {},
): Promise<Principal | null> {
  if (!secret.startsWith(KEY_PREFIX)) return null;
  return admit(await lookupWhere(db, tenancy, 'k.key_hash', hashSecret(secret)), options);
}

export interface AuthOptions {
  activeOnly?: boolean;
}

export function admit(principal: Principal | null, options: AuthOptions): Principal | null {
  if (!principal) return null;
  return options.activeOnly && principal.projectStatus !== 'active' ? null : principal;
}

/**
 * The principal of a key named by id (unrevoked, its project not deleted): what an OAuth access token
 * stands for (src/auth/tokens.ts), and who may consent on the OAuth pages.
 */
export function principalOfKeyId(db: Db, tenancy: Tenancy, keyId: string): Promise<Principal | null> {
  return lookupWhere(db, tenancy, 'k.id', keyId);
}

/** The key's row with its project's status and its tenant's tier, joined in one statement. */
async function lookupWhere(
  db: Db,
  tenancy: Tenancy,
  column: 'k.key_hash' | 'k.id',
  value: string,
): Promise<Principal | null> {
  const row = await db('api_keys as k')
    .join(tenancy.projects(db).as('p'), 'p.id', 'k.project_id')
    .join(tenancy.tenants(db).as('t'), 't.id', 'k.tenant_id')
    .where(column, value)
    .whereNull('k.revoked_at')
    .whereIn('p.status', ['active', 'archived'])
    .first('k.id', 'k.tenant_id', 'k.project_id', 'k.scope', 't.tier', 'p.status');
  if (!row) return null;
  return {
    keyId: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    scope: row.scope,
    tier: row.tier,
    projectStatus: row.status,
  };
}

/**
 * authenticate() with the principals of recently used keys kept for `ttlMs`, so that a REST request
 * or an OTP handshake costs no query for its key (docs/decisions.md, "Revocation"). Revocation and project lifecycle must still work at once: the
 * service invalidates a key when it is revoked and a project's keys when it is archived, restored or
 * deleted, here and, through notices, in other processes; a lookup in flight during an invalidation
 * is not kept. Unknown secrets are never kept.
 */
export class KeyCache {
  private readonly entries = new Map<string, { principal: Principal; expires: number }>();
  /** Bumped by every invalidation; a lookup started under an older epoch is not cached. */
  private epoch = 0;

  constructor(
    private readonly db: Db,
    private readonly tenancy: Tenancy,
    private readonly options: { ttlMs: number; maxEntries: number },
  ) {}

  /** A principal held in memory is answered at once (no promise: every REST request asks). */
  authenticate(secret: string, options: AuthOptions = {}): Principal | null | Promise<Principal | null> {
    if (!secret.startsWith(KEY_PREFIX)) return null;
    const keyHash = hashSecret(secret);
    const hit = this.entries.get(keyHash);
    if (hit && hit.expires > Date.now()) return admit(hit.principal, options);
    return this.lookup(keyHash, options);
  }

  private async lookup(keyHash: string, options: AuthOptions): Promise<Principal | null> {
    const epoch = this.epoch;
    const principal = await lookupWhere(this.db, this.tenancy, 'k.key_hash', keyHash);
    if (!principal || epoch !== this.epoch || this.options.ttlMs <= 0) {
      this.entries.delete(keyHash);
      return admit(principal, options);
    }
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { principal, expires: Date.now() + this.options.ttlMs });
    return admit(principal, options);
  }

  /** Forget every key (notices of revocations may have been missed). */
  clear(): void {
    this.forget(() => true);
  }

  /** A key was revoked: forget it now (and any lookup still in flight). */
  invalidate(keyId: string): void {
    this.forget((p) => p.keyId === keyId);
  }

  /** A project was archived, restored or deleted: its keys' principals are stale. */
  invalidateProject(projectId: string): void {
    this.forget((p) => p.projectId === projectId);
  }

  private forget(match: (principal: Principal) => boolean): void {
    this.epoch++;
    for (const [keyHash, entry] of this.entries) if (match(entry.principal)) this.entries.delete(keyHash);
  }
}
