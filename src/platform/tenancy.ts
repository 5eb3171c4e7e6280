// The platform room's side of two ports onto the tenants and projects it owns: auth's `Tenancy`
// (the principal of a key, the bootstrap key's project) and the assets room's `TenantTiers` (the
// storage quota of a tier). Wired in src/service.ts; no other room names these tables.

import type { Tenancy } from '../auth/tenancy.js';
import type { Db } from '../db/connect.js';

/** The assets room's TenantTiers, spelled out here: the platform room does not import the assets room. */
interface TenantTiers {
  tierOf(db: Db, tenantId: string): Promise<string | undefined>;
}

export const tenancy: Tenancy &
  TenantTiers & {
    tenantOfProject(db: Db, projectId: string): Promise<{ tenantId: string; tier?: string } | undefined>;
  } = {
  projects: (db) => db('projects').select('id', 'status'),
  tenants: (db) => db('tenants').select('id', 'tier'),
  async ensureProject(trx, { tenantId, tenantName, projectId, projectName }) {
    await trx('tenants').insert({ id: tenantId, name: tenantName }).onConflict('id').ignore();
    await trx('projects').insert({ id: projectId, tenant_id: tenantId, name: projectName }).onConflict('id').ignore();
  },
  /** The ai room's ProjectTenants (its quota): a project's tenant and that tenant's tier. */
  async tenantOfProject(db: Db, projectId: string) {
    const row = await db('projects')
      .join('tenants', 'tenants.id', 'projects.tenant_id')
      .where('projects.id', projectId)
      .first('tenants.id as tenantId', 'tenants.tier as tier');
    return row ? { tenantId: row.tenantId as string, tier: row.tier as string | undefined } : undefined;
  },
  async tierOf(db, tenantId) {
    const tenant = await db('tenants').where('id', tenantId).first('tier');
    return tenant?.tier;
  },
};
