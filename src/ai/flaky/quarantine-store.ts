// Quarantines (docs/ai.md, "Quarantine"): a test case under one still runs and reports, but its
// failure does not fail a run's verdict. Each lasts a set time; POST again renews it, DELETE undoes it.
// Only a person quarantines (there is no automatic quarantine, so a broken case never is).

import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';

export interface Quarantine {
  testCaseId: string;
  reason: string | null;
  createdBy: string;
  createdAt: string;
  renewedAt: string;
  expiresAt: string;
}

interface QuarantineRow {
  test_case_id: string;
  reason: string | null;
  created_by: string;
  created_at: Date;
  renewed_at: Date;
  expires_at: Date;
}

function quarantineOf(row: QuarantineRow): Quarantine {
  return {
    testCaseId: row.test_case_id,
    reason: row.reason,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    renewedAt: row.renewed_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}

export class QuarantineStore {
  constructor(
    private readonly db: Db,
    private readonly defaultDays: number,
  ) {}

  /** Quarantines the case, or renews its quarantine (a new term from now; the first creator stays). */
  async quarantine(
    principal: Principal,
    testCaseId: string,
    input: { days?: number; reason?: string },
  ): Promise<Quarantine & { renewed: boolean }> {
    const days = input.days ?? this.defaultDays;
    const result = await this.db.raw(
      `INSERT INTO ai_quarantines AS q (project_id, test_case_id, reason, created_by, expires_at)
       VALUES (:projectId, :testCaseId, :reason, :by, now() + make_interval(days => :days))
       ON CONFLICT (project_id, test_case_id) DO UPDATE
          SET reason = coalesce(EXCLUDED.reason, q.reason), renewed_at = now(), expires_at = EXCLUDED.expires_at,
              -- An expired quarantine taken up again is a new one.
              created_by = CASE WHEN q.expires_at <= now() THEN EXCLUDED.created_by ELSE q.created_by END,
              created_at = CASE WHEN q.expires_at <= now() THEN now() ELSE q.created_at END
       RETURNING *, (xmax <> 0) AS renewed`,
      { projectId: principal.projectId, testCaseId, reason: input.reason ?? null, by: principal.keyId, days },
    );
    const row = result.rows[0] as QuarantineRow & { renewed: boolean };
    return { ...quarantineOf(row), renewed: row.renewed };
  }

  async release(principal: Principal, testCaseId: string): Promise<Quarantine> {
    const [row] = await this.db('ai_quarantines')
      .where({ project_id: principal.projectId, test_case_id: testCaseId })
      .delete()
      .returning('*');
    if (!row) throw errors.notFound('Quarantine of test case', testCaseId);
    return quarantineOf(row);
  }

  /** The project's quarantines that have not expired. */
  async live(projectId: string): Promise<Quarantine[]> {
    const rows = await this.db('ai_quarantines')
      .where('project_id', projectId)
      .where('expires_at', '>', this.db.fn.now())
      .orderBy('test_case_id');
    return rows.map(quarantineOf);
  }

  /** The planner's port (QuarantinedCases): which of `caseIds` are under a live quarantine. */
  async quarantinedAmong(projectId: string, caseIds: string[]): Promise<Set<string>> {
    if (!caseIds.length) return new Set();
    const rows = await this.db('ai_quarantines')
      .where('project_id', projectId)
      .whereIn('test_case_id', caseIds)
      .where('expires_at', '>', this.db.fn.now())
      .select('test_case_id');
    return new Set(rows.map((r: { test_case_id: string }) => r.test_case_id));
  }
}
