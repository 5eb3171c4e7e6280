// The first admin key: SVC_BOOTSTRAP_KEY when given (idempotent), otherwise minted on the first start
// of an empty database, printed once and written to DATA_DIR/bootstrap-key.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/connect.js';
import { createKey, hashSecret, KEY_PREFIX } from './keys.js';
import type { Tenancy } from './tenancy.js';

export const DEFAULT_TENANT_ID = 'ten_default';
export const DEFAULT_PROJECT_ID = 'prj_default';

export interface BootstrapResult {
  /** The secret, only when this start minted it. */
  minted?: string;
  file?: string;
}

/** `tenancy` makes the default tenant and project the key belongs to (the platform room owns them). */
export async function bootstrapAdminKey(
  db: Db,
  tenancy: Tenancy,
  options: { bootstrapKey?: string; dataDir: string },
): Promise<BootstrapResult> {
  const { bootstrapKey, dataDir } = options;
  if (
    bootstrapKey !== undefined &&
    (!bootstrapKey.startsWith(KEY_PREFIX) || bootstrapKey.length < KEY_PREFIX.length + 32)
  ) {
    throw new Error(`SVC_BOOTSTRAP_KEY must be "${KEY_PREFIX}" followed by at least 32 characters`);
  }
  return db.transaction(async (trx) => {
    // Several processes may start at once on one database; one of them does the work.
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', ['otp:bootstrap']);
    await tenancy.ensureProject(trx, {
      tenantId: DEFAULT_TENANT_ID,
      tenantName: 'Default tenant',
      projectId: DEFAULT_PROJECT_ID,
      projectName: 'Default project',
    });
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
    await fs.writeFile(file, `${secret}\n`, { mode: 0o600 });
    return { minted: secret, file };
  });
}
