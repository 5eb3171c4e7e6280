// Projects of the caller's tenant. A project holds artifacts, runs, assets and keys; keys of one project
// never see another's data. Admin keys of a tenant manage its projects; a new project comes with its
// first admin key, shown once in the create answer (a project without a key could not be used).
import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import type { Principal } from '../auth/principal.js';
import { createKey } from '../auth/keys.js';
import { errors } from '../errors.js';
import { newId } from '../ids.js';
import { checkIfMatch, type IfMatch } from '../rest/conditional.js';
import { paginateSorted, type Page } from '../rest/pagination.js';
import { registerSchema, revision, schemaById, timestamps } from '../rest/schemas.js';
import { buildSchemas, type Data, type Rec, type ResourceDefinition } from '../rest/resource/definition.js';
import type { ResourceStore } from '../rest/resource/routes.js';
import { ApiKeyWithSecretSchema } from '../api-keys/routes.js';
import type { Lifecycle } from './lifecycle.js';

export const projectDefinition: ResourceDefinition = {
  path: 'platform/projects',
  schemaName: 'Project',
  pluralName: 'Projects',
  label: 'project',
  idPrefix: 'prj',
  description: "A project of the tenant: it holds artifacts, OTP runs, assets and API keys. Keys of one project never see another project's data.",
  fields: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Name of the project' },
    description: { type: 'string', maxLength: 5_000, description: 'What the project is' },
    groupId: { type: 'string', pattern: '^grp_', maxLength: 100, description: 'The group of projects it belongs to (platform/groups)' },
  },
  required: ['name'],
  computed: {
    archivedAt: { type: 'string', format: 'date-time', readOnly: true, description: 'When it was archived (absent while active)' },
  },
  system: {
    status: { enum: ['active', 'archived'], readOnly: true, description: 'archived: read-only until restored (platform/lifecycle)' },
    tenantId: { type: 'string' },
    version: revision,
    ...timestamps,
  },
  filters: ['status', 'groupId'],
  scopes: { read: 'read', write: 'admin' },
};

export const projectSchemas = buildSchemas(projectDefinition);

const projectRecord = schemaById('Project') as { properties: Record<string, unknown>; required: string[] };
export const ProjectCreatedSchema = registerSchema({
  ...projectRecord,
  $id: 'ProjectCreated',
  title: 'ProjectCreated',
  description: 'The new project, with its first admin key (the secret is shown this once)',
  required: [...projectRecord.required, 'adminKey'],
  properties: { ...projectRecord.properties, adminKey: ApiKeyWithSecretSchema },
});

export function toProject(row: any): Rec {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    ...(row.group_id !== null ? { groupId: row.group_id } : {}),
    ...(row.archived_at ? { archivedAt: row.archived_at.toISOString() } : {}),
    status: row.status,
    tenantId: row.tenant_id,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Projects of a tenant that still exist (deleted ones are gone for every purpose). */
export function tenantProjects(db: Knex, tenantId: string) {
  return db('projects').where('tenant_id', tenantId).whereNot('status', 'deleted');
}

async function checkGroup(db: Knex, tenantId: string, groupId: unknown): Promise<void> {
  if (typeof groupId !== 'string') return;
  const group = await db('project_groups').where({ id: groupId, tenant_id: tenantId }).first('id');
  if (!group) throw errors.validation('Unknown group', [{ field: 'body.groupId', message: `group ${groupId} not found in this tenant` }]);
}

export class ProjectStore implements ResourceStore {
  constructor(
    private readonly db: Db,
    private readonly lifecycle: Lifecycle,
  ) {}

  async create(principal: Principal, input: Data): Promise<Rec> {
    return this.db.transaction(async (trx) => {
      await checkGroup(trx, principal.tenantId, input.groupId);
      const [row] = await trx('projects')
        .insert({
          id: newId('prj'),
          tenant_id: principal.tenantId,
          name: input.name,
          description: input.description ?? null,
          group_id: input.groupId ?? null,
        })
        .returning('*');
      const { key, secret } = await createKey(trx, { tenantId: principal.tenantId, projectId: row.id }, { name: 'first admin key', scope: 'admin' });
      return { ...toProject(row), adminKey: { ...key, key: secret } };
    });
  }

  async get(principal: Principal, id: string): Promise<Rec> {
    const row = await tenantProjects(this.db, principal.tenantId).where('id', id).first();
    if (!row) throw errors.notFound('Project', id);
    return toProject(row);
  }

  list(principal: Principal, query: Record<string, any>): Promise<Page<Rec>> {
    const q = tenantProjects(this.db, principal.tenantId);
    if (query.status) q.whereIn('status', query.status);
    if (query.groupId) q.whereIn('group_id', query.groupId);
    if (query.updatedSince) q.where('updated_at', '>=', new Date(query.updatedSince));
    return paginateSorted(q, query, (rows) => rows.map(toProject), { id: 'id', updatedAt: 'updated_at' });
  }

  async update(principal: Principal, id: string, patch: Data, ifMatch: IfMatch): Promise<Rec> {
    return this.db.transaction(async (trx) => {
      const row = await tenantProjects(trx, principal.tenantId).where('id', id).forUpdate().first();
      if (!row) throw errors.notFound('Project', id);
      checkIfMatch(ifMatch, row.version, `Project ${id}`);
      await checkGroup(trx, principal.tenantId, patch.groupId);
      const changes: Record<string, unknown> = {};
      if ('name' in patch) changes.name = patch.name;
      if ('description' in patch) changes.description = patch.description ?? null;
      if ('groupId' in patch) changes.group_id = patch.groupId ?? null;
      const [updated] = await trx('projects')
        .where('id', id)
        .update({ ...changes, version: row.version + 1, updated_at: trx.fn.now() })
        .returning('*');
      return toProject(updated);
    });
  }

  /** Deleting a project is its lifecycle's delete: its keys stop working at once. */
  async remove(principal: Principal, id: string, ifMatch: IfMatch): Promise<void> {
    await this.lifecycle.change(principal, id, 'delete', ifMatch);
  }
}
