// What auth needs of the tenants and projects the platform room owns: a port the platform room
// implements (src/platform/tenancy.ts), wired in src/service.ts. Auth names only its own table
// (api_keys); the owner decides which of its rows and columns auth reads and how a project is made.
import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';

export interface Tenancy {
  /** Projects as a relation of `(id, status)`: a key's principal is read in one statement, joined to it. */
  projects(db: Db): Knex.QueryBuilder;
  /** Tenants as a relation of `(id, tier)`. */
  tenants(db: Db): Knex.QueryBuilder;
  /** Makes a tenant and a project of it where they are missing, in the caller's transaction. */
  ensureProject(
    trx: Db,
    project: { tenantId: string; tenantName: string; projectId: string; projectName: string },
  ): Promise<void>;
}
