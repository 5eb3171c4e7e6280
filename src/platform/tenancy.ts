// The platform room's side of two ports onto the tenants and projects it owns: auth's `Tenancy`
// (the principal of a key, the bootstrap key's project) and the assets room's `TenantTiers` (the
// storage quota of a tier). Wired in src/service.ts; no other room names these tables.
import type { Db } from '../db/connect.js';
import type { Tenancy } from '../auth/tenancy.js';

/** The assets room's TenantTiers, spelled out here: the platform room does not import the assets room. */
interface TenantTiers {
  tierOf(db: Db, tenantId: string): Promise<string | undefined>;
}

export const tenancy: Tenancy & TenantTiers = {
  projects: (db) => db('projects').select('id', 'status'),
  tenants: (db) => db('tenants').select('id', 'tier'),
  async ensureProject(trx, { tenantId, tenantName, projectId, projectName }) {
    await trx('tenants').insert({ id: tenantId, name: tenantName }).onConflict('id').ignore();
    await trx('projects').insert({ id: projectId, tenant_id: tenantId, name: projectName }).onConflict('id').ignore();
  },
  async tierOf(db, tenantId) {
    const tenant = await db('tenants').where('id', tenantId).first('tier');
    return tenant?.tier;
  },
};
