// Groups of projects within a tenant, in the project_groups table. A project is in at most one group
// (its groupId, a foreign key); deleting a group leaves its projects ungrouped. The name is unique in
// the tenant (a unique index), so a duplicate is a 409 whichever process writes it.
import type { Knex } from 'knex';
import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { newId } from '../../ids.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { type Page, paginateSorted } from '../../rest/pagination.js';
import type { Data, Rec } from '../../rest/resource/definition.js';
import type { ListQuery, ResourceStore } from '../../rest/resource/store.js';

/** A row of the project_groups table. */
interface GroupRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

function toGroup(row: GroupRow, projectIds: string[]): Rec {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    projectIds,
    tenantId: row.tenant_id,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export class GroupStore implements ResourceStore {
  constructor(private readonly db: Db) {}

  private scoped(db: Knex, principal: Principal) {
    return db<GroupRow>('project_groups').where('tenant_id', principal.tenantId);
  }

  private async answer(rows: GroupRow[]): Promise<Rec[]> {
    const members: Array<{ id: string; group_id: string }> = rows.length
      ? await this.db('projects')
          .whereIn(
            'group_id',
            rows.map((r) => r.id),
          )
          .whereNot('status', 'deleted')
          .orderBy('id')
          .select('id', 'group_id')
      : [];
    return rows.map((row) =>
      toGroup(
        row,
        members.filter((m) => m.group_id === row.id).map((m) => m.id),
      ),
    );
  }

  /** The name is unique in the tenant: a duplicate is a 409. */
  private async write<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
        throw errors.conflict('Another group of this tenant has this name', { field: 'body.name' });
      }
      throw err;
    }
  }

  async create(principal: Principal, input: Data): Promise<Rec> {
    const row = await this.write(async (trx) => {
      const [inserted] = await trx('project_groups')
        .insert({
          id: newId('grp'),
          tenant_id: principal.tenantId,
          name: input.name,
          description: input.description ?? null,
        })
        .returning('*');
      return inserted;
    });
    return (await this.answer([row]))[0];
  }

  async get(principal: Principal, id: string): Promise<Rec> {
    const row = await this.scoped(this.db, principal).where('id', id).first();
    if (!row) throw errors.notFound('Group', id);
    return (await this.answer([row]))[0];
  }

  list(principal: Principal, query: ListQuery): Promise<Page<Rec>> {
    const q = this.scoped(this.db, principal);
    if (query.updatedSince) q.where('updated_at', '>=', new Date(query.updatedSince));
    return paginateSorted(q, query, (rows: GroupRow[]) => this.answer(rows), { id: 'id', updatedAt: 'updated_at' });
  }

  async update(principal: Principal, id: string, patch: Data, ifMatch: IfMatch): Promise<Rec> {
    const row = await this.write(async (trx) => {
      const current = await this.scoped(trx, principal).where('id', id).forUpdate().first();
      if (!current) throw errors.notFound('Group', id);
      checkIfMatch(ifMatch, current.version, `Group ${id}`);
      const changes: Record<string, unknown> = {};
      if ('name' in patch) changes.name = patch.name;
      if ('description' in patch) changes.description = patch.description ?? null;
      const [updated] = await trx('project_groups')
        .where('id', id)
        .update({ ...changes, version: current.version + 1, updated_at: trx.fn.now() })
        .returning('*');
      return updated;
    });
    return (await this.answer([row]))[0];
  }

  async remove(principal: Principal, id: string, ifMatch: IfMatch): Promise<void> {
    await this.db.transaction(async (trx) => {
      const current = await this.scoped(trx, principal).where('id', id).forUpdate().first();
      if (!current) throw errors.notFound('Group', id);
      checkIfMatch(ifMatch, current.version, `Group ${id}`);
      // Its projects stay, ungrouped (and get a new revision, since their groupId changed).
      await trx('projects')
        .where('group_id', id)
        .update({ group_id: null, version: trx.raw('version + 1'), updated_at: trx.fn.now() });
      await trx('project_groups').where('id', id).delete();
    });
  }
}
