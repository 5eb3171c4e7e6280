// The lifecycle of a project: active → archived (read-only: reads work, every write is a 409, OTP
// executors are disconnected) → restored (active again) — and deleted from either state (its keys stop
// working at once: a deleted project is not found by anyone). Deletion keeps the rows; nothing in the
// API reaches them any more.

import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { checkIfMatch, type IfMatch } from '../../rest/conditional.js';
import { type ProjectRow, tenantProjects } from '../projects/rows.js';

export type LifecycleAction = 'archive' | 'restore' | 'delete';

function view(row: ProjectRow) {
  return {
    projectId: row.id,
    status: row.status,
    archivedAt: row.archived_at?.toISOString() ?? null,
    deletedAt: row.deleted_at?.toISOString() ?? null,
    version: row.version,
  };
}

export class Lifecycle {
  constructor(
    private readonly db: Db,
    /** Told of every change of status (archived or deleted: executors disconnected, queued runs cancelled). */
    private readonly onChanged: (projectId: string, status: 'active' | 'archived' | 'deleted') => Promise<void>,
  ) {}

  async view(principal: Principal, projectId: string) {
    const row = await tenantProjects(this.db, principal.tenantId).where('id', projectId).first();
    if (!row) throw errors.notFound('Project', projectId);
    return view(row);
  }

  /** Archive and restore are idempotent: asking for the state a project is already in changes nothing. */
  async change(principal: Principal, projectId: string, action: LifecycleAction, ifMatch: IfMatch) {
    const row = await this.db.transaction(async (trx) => {
      const current = await tenantProjects(trx, principal.tenantId).where('id', projectId).forUpdate().first();
      if (!current) throw errors.notFound('Project', projectId);
      checkIfMatch(ifMatch, current.version, `Project ${projectId}`);
      const target = { archive: 'archived', restore: 'active', delete: 'deleted' }[action];
      if (current.status === target) return current;
      const [updated] = await trx('projects')
        .where('id', projectId)
        .update({
          status: target,
          archived_at: action === 'archive' ? trx.fn.now() : action === 'restore' ? null : current.archived_at,
          deleted_at: action === 'delete' ? trx.fn.now() : null,
          version: current.version + 1,
          updated_at: trx.fn.now(),
        })
        .returning('*');
      return updated;
    });
    await this.onChanged(projectId, row.status);
    return view(row);
  }
}
