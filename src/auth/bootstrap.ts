// The first admin key: SVC_BOOTSTRAP_KEY when given (idempotent), otherwise minted on the first start
// of an empty database, printed once and written to DATA_DIR/bootstrap-key.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/connect.js';
import { createKey, hashSecret, KEY_PREFIX } from './keys.js';

export const DEFAULT_TENANT_ID = 'ten_default';
export const DEFAULT_PROJECT_ID = 'prj_default';

async function ensureDefaultProject(trx: Db): Promise<void> {
  await trx('tenants').insert({ id: DEFAULT_TENANT_ID, name: 'Default tenant' }).onConflict('id').ignore();
  await trx('projects')
    .insert({ id: DEFAULT_PROJECT_ID, tenant_id: DEFAULT_TENANT_ID, name: 'Default project' })
    .onConflict('id')
    .ignore();
}

export interface BootstrapResult {
  /** The secret, only when this start minted it. */
  minted?: string;
  file?: string;
}

export async function bootstrapAdminKey(db: Db, options: { bootstrapKey?: string; dataDir: string }): Promise<BootstrapResult> {
  const { bootstrapKey, dataDir } = options;
  if (bootstrapKey !== undefined && (!bootstrapKey.startsWith(KEY_PREFIX) || bootstrapKey.length < KEY_PREFIX.length + 32)) {
    throw new Error(`SVC_BOOTSTRAP_KEY must be "${KEY_PREFIX}" followed by at least 32 characters`);
  }
  return db.transaction(async (trx) => {
    // Several processes may start at once on one database; one of them does the work.
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['otp:bootstrap']);
    await ensureDefaultProject(trx);
    const owner = { tenantId: DEFAULT_TENANT_ID, projectId: DEFAULT_PROJECT_ID };
    if (bootstrapKey) {
      const existing = await trx('api_keys').where('key_hash', hashSecret(bootstrapKey)).first('id');
      if (!existing) await createKey(trx, owner, { name: 'bootstrap', scope: 'admin', secret: bootstrapKey });
      return {};
    }
    const anyKey = await trx('api_keys').first('id');
    if (anyKey) return {};
    const { secret } = await createKey(trx, owner, { name: 'bootstrap', scope: 'admin' });
    await fs.mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, 'bootstrap-key');
    await fs.writeFile(file, secret + '\n', { mode: 0o600 });
    return { minted: secret, file };
  });
}
