// The projects table as the platform room's stores read it: its row and the projects of a tenant.
// A file of its own so that the project store and the lifecycle, which uses these, do not import
// each other (the project store deletes through the lifecycle).
import type { Knex } from 'knex';

/** A row of the projects table. */
export interface ProjectRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  group_id: string | null;
  status: 'active' | 'archived' | 'deleted';
  archived_at: Date | null;
  deleted_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** Projects of a tenant that still exist (deleted ones are gone for every purpose). */
export function tenantProjects(db: Knex, tenantId: string) {
  return db<ProjectRow>('projects').where('tenant_id', tenantId).whereNot('status', 'deleted');
}
