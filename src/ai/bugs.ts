// Bugs filed for a signature (POST /ai/bugs/draft with save): the later failures of that signature
// show them, in clusters and in triage, as the bug stands now (its status read from the bug itself).

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { AppError, ErrorCode } from '../errors.js';
import type { ResourceStore } from '../rest/resource/store.js';

export interface LinkedBug {
  id: string;
  title: string | null;
  status: string | null;
}

/** Statuses of a bug still being worked on: its signature's failures are a known issue. */
export const OPEN_BUG_STATUSES = new Set(['open', 'in_progress']);

export class BugLookup {
  constructor(
    private readonly db: Db,
    private readonly bugs: Pick<ResourceStore, 'get'>,
  ) {}

  async bugsOf(principal: Principal, signatures: readonly string[]): Promise<Map<string, LinkedBug[]>> {
    const found = new Map<string, LinkedBug[]>();
    if (signatures.length === 0) return found;
    const rows = await this.db('ai_signature_bugs')
      .where('project_id', principal.projectId)
      .whereIn('signature', [...signatures])
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'bug_id', order: 'desc' },
      ])
      .select('signature', 'bug_id');
    for (const row of rows) {
      const bug = await this.bugs.get(principal, row.bug_id).catch((err) => {
        if (err instanceof AppError && err.code === ErrorCode.notFound) return undefined;
        throw err;
      });
      if (!bug) continue;
      const list = found.get(row.signature) ?? [];
      list.push({
        id: bug.id as string,
        title: (bug.title as string | undefined) ?? null,
        status: (bug.status as string | undefined) ?? null,
      });
      found.set(row.signature, list);
    }
    return found;
  }

  async link(projectId: string, signature: string, bugId: string): Promise<void> {
    await this.db('ai_signature_bugs')
      .insert({ project_id: projectId, signature, bug_id: bugId })
      .onConflict(['project_id', 'signature', 'bug_id'])
      .ignore();
  }
}
