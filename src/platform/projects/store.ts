// Projects of the caller's tenant, in the projects table. A project holds artifacts, runs, assets and
// keys; keys of one project never see another's data. Admin keys of a tenant manage its projects; a
// new project comes with its first admin key, made in the same transaction and shown once in the
// create answer (a project without a key could not be used).
import type { Knex } from 'knex';
import { createKey } from '../../auth/keys.js';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { type Page, paginateSorted } from '../../rest/pagination.js';
import type { Data, Rec } from '../../rest/resource/definition.js';
import type { ListQuery, ResourceStore } from '../../rest/resource/store.js';
import type { Lifecycle } from '../lifecycle/store.js';
import { type ProjectRow, tenantProjects } from './rows.js';

export function toProject(row: ProjectRow): Rec {
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

async function checkGroup(db: Knex, tenantId: string, groupId: unknown): Promise<void> {
  if (typeof groupId !== 'string') return;
  const group = await db('project_groups').where({ id: groupId, tenant_id: tenantId }).first('id');
  if (!group)
    throw errors.validation('Unknown group', [
      { field: 'body.groupId', message: `group ${groupId} not found in this tenant` },
    ]);
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
      const { key, secret } = await createKey(
        trx,
        { tenantId: principal.tenantId, projectId: row.id },
        { name: 'first admin key', scope: 'admin' },
      );
      return { ...toProject(row), adminKey: { ...key, key: secret } };
    });
  }

  async get(principal: Principal, id: string): Promise<Rec> {
    const row = await tenantProjects(this.db, principal.tenantId).where('id', id).first();
    if (!row) throw errors.notFound('Project', id);
    return toProject(row);
  }

  list(principal: Principal, query: ListQuery): Promise<Page<Rec>> {
    const q = tenantProjects(this.db, principal.tenantId);
    // Both filters are enum or string fields: the query schema makes each an array of values (any of).
    const { status, groupId } = query as ListQuery & { status?: string[]; groupId?: string[] };
    if (status) q.whereIn('status', status);
    if (groupId) q.whereIn('group_id', groupId);
    if (query.updatedSince) q.where('updated_at', '>=', new Date(query.updatedSince));
    return paginateSorted(q, query, (rows: ProjectRow[]) => rows.map(toProject), { id: 'id', updatedAt: 'updated_at' });
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
