// API keys: `svc_pk_` + 43 random characters, stored only as a SHA-256 hash.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { newId } from '../ids.js';
import { ApiKeyModel } from '../db/models.js';
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
 * The principal a secret stands for, or null when it is unknown, revoked or its project is deleted.
 * Keys of an archived project still authenticate (reads work; writes are refused by the REST layer)
 * unless `activeOnly` asks for an active project (OTP sessions).
 */
export async function authenticate(db: Db, secret: string, options: { activeOnly?: boolean } = {}): Promise<Principal | null> {
  if (!secret.startsWith(KEY_PREFIX)) return null;
  const row = await db('api_keys as k')
    .join('projects as p', 'p.id', 'k.project_id')
    .join('tenants as t', 't.id', 'k.tenant_id')
    .where('k.key_hash', hashSecret(secret))
    .whereNull('k.revoked_at')
    .whereIn('p.status', options.activeOnly ? ['active'] : ['active', 'archived'])
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
