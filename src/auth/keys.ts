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
  version: number;
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
  version: number;
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
    version: row.version,
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
