// Healing proposals (docs/ai.md, "Healing"): found in run history, kept with their evidence, decided
// by a person. A proposal is never applied on its own; accepting one writes a new version of the test
// case (TestCaseEditor), rejecting one remembers the refusal for the same evidence key.

import type { Principal } from '../../auth/principal.js';
import { type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { IdPrefix, newId } from '../../ids.js';
import type { ProposalDraft } from './rules.js';

export type HealingStatus = 'proposed' | 'accepted' | 'rejected';

export interface HealingProposal {
  id: string;
  testCaseId: string;
  caseVersion: number | null;
  stepPosition: number;
  oldLocator: unknown;
  newLocator: unknown;
  evidence: ProposalDraft['evidence'];
  status: HealingStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  newVersion: number | null;
  reason: string | null;
  createdAt: string;
}

interface ProposalRow {
  id: string;
  test_case_id: string;
  case_version: number | null;
  step_position: number;
  old_locator: unknown;
  new_locator: unknown;
  evidence: ProposalDraft['evidence'];
  status: HealingStatus;
  decided_by: string | null;
  decided_at: Date | null;
  new_version: number | null;
  reason: string | null;
  created_at: Date;
}

export function proposalOf(row: ProposalRow): HealingProposal {
  return {
    id: row.id,
    testCaseId: row.test_case_id,
    caseVersion: row.case_version,
    stepPosition: row.step_position,
    oldLocator: row.old_locator,
    newLocator: row.new_locator,
    evidence: row.evidence,
    status: row.status,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at ? new Date(row.decided_at).toISOString() : null,
    newVersion: row.new_version,
    reason: row.reason,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export class HealingStore {
  constructor(
    private readonly db: Db,
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  /**
   * Keeps the drafts not seen before (new evidence keys) and reports each to webhooks in the same
   * transaction; an open proposal gets the newer evidence; a decided key (accepted or refused) is
   * left as it was.
   */
  async upsert(principal: Principal, drafts: readonly ProposalDraft[]): Promise<HealingProposal[]> {
    if (!drafts.length) return [];
    return this.db.transaction(async (trx) => {
      const rows = drafts.map((d) => ({
        id: newId(IdPrefix.healingProposal),
        tenant_id: principal.tenantId,
        project_id: principal.projectId,
        test_case_id: d.testCaseId,
        case_version: d.version,
        step_position: d.position,
        old_locator: d.oldLocator,
        new_locator: d.newLocator,
        evidence_key: d.key,
        evidence: d.evidence,
      }));
      const result = await trx.raw(
        `INSERT INTO ai_healing_proposals AS p (id, tenant_id, project_id, test_case_id, case_version, step_position, old_locator, new_locator, evidence_key, evidence)
         SELECT id, tenant_id, project_id, test_case_id, case_version, step_position, old_locator, new_locator, evidence_key, evidence
           FROM jsonb_to_recordset(?::jsonb) AS v(id text, tenant_id text, project_id text, test_case_id text, case_version int,
                step_position int, old_locator jsonb, new_locator jsonb, evidence_key text, evidence jsonb)
         ON CONFLICT (project_id, evidence_key) DO UPDATE SET evidence = EXCLUDED.evidence, case_version = EXCLUDED.case_version, updated_at = now()
          WHERE p.status = 'proposed' AND p.evidence IS DISTINCT FROM EXCLUDED.evidence
         RETURNING p.*, (xmax = 0) AS inserted`,
        [JSON.stringify(rows)],
      );
      const created = (result.rows as Array<ProposalRow & { inserted: boolean }>)
        .filter((r) => r.inserted)
        .map(proposalOf);
      if (created.length) {
        await this.events.record(
          trx,
          created.map((p) => ({
            type: EventType.healingProposed,
            tenantId: principal.tenantId,
            projectId: principal.projectId,
            data: { ...p },
          })),
        );
      }
      return created;
    });
  }

  async list(
    projectId: string,
    filter: { status?: HealingStatus; testCaseId?: string; limit: number },
  ): Promise<HealingProposal[]> {
    const q = this.db('ai_healing_proposals').where('project_id', projectId).orderBy('id', 'desc').limit(filter.limit);
    if (filter.status) q.where('status', filter.status);
    if (filter.testCaseId) q.where('test_case_id', filter.testCaseId);
    return (await q).map(proposalOf);
  }

  async get(projectId: string, id: string): Promise<HealingProposal> {
    const row = await this.db('ai_healing_proposals').where({ project_id: projectId, id }).first();
    if (!row) throw errors.notFound('Healing proposal', id);
    return proposalOf(row);
  }

  /** Marks an open proposal decided; a proposal decided already is a 409. */
  async decide(
    principal: Principal,
    id: string,
    decision: { status: 'accepted' | 'rejected'; newVersion?: number; reason?: string },
  ): Promise<HealingProposal> {
    const [row] = await this.db('ai_healing_proposals')
      .where({ project_id: principal.projectId, id, status: 'proposed' })
      .update({
        status: decision.status,
        decided_by: principal.keyId,
        decided_at: this.db.fn.now(),
        new_version: decision.newVersion ?? null,
        reason: decision.reason ?? null,
        updated_at: this.db.fn.now(),
      })
      .returning('*');
    if (row) return proposalOf(row);
    const current = await this.get(principal.projectId, id);
    throw errors.conflict(`Healing proposal ${id} is already ${current.status}`, { status: current.status });
  }
}
