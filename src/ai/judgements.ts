// What people say about failures, which wins over what the facts suggest: a correction sets the
// category of one signature from then on; a project rule maps a pattern on the signature or the
// message to a category (the oldest matching rule wins).

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import { IdPrefix, newId } from '../ids.js';
import { type Page, paginate } from '../rest/pagination.js';
import type { TriageCategory } from './schemas.js';

export interface Correction {
  signature: string;
  category: TriageCategory;
  note: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface TriageRule {
  id: string;
  field: 'signature' | 'message';
  pattern: string;
  category: TriageCategory;
  note: string | null;
  createdBy: string | null;
  createdAt: string;
}

/** An ai_triage_corrections row. */
interface CorrectionRow {
  signature: string;
  category: TriageCategory;
  note: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** An ai_triage_rules row. */
interface RuleRow {
  id: string;
  field: TriageRule['field'];
  pattern: string;
  category: TriageCategory;
  note: string | null;
  created_by: string | null;
  created_at: Date;
}

const correctionView = (r: CorrectionRow): Correction => ({
  signature: r.signature,
  category: r.category,
  note: r.note,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});
const ruleView = (r: RuleRow): TriageRule => ({
  id: r.id,
  field: r.field,
  pattern: r.pattern,
  category: r.category,
  note: r.note,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
});

/**
 * A rule's pattern as a test: case-insensitive, `*` for any run of characters, and without a `*` the
 * text anywhere. Built from escaped literals joined by `.*`, so no pattern a user writes is a regex
 * of its own (nothing to backtrack on beyond the stars, each of which is bounded by the text's length).
 */
export function patternMatcher(pattern: string): (text: string) => boolean {
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const body = pattern.includes('*') ? `^${pattern.split('*').map(literal).join('.*')}$` : literal(pattern);
  const regex = new RegExp(body, 'is');
  return (text) => regex.test(text);
}

export class Judgements {
  constructor(private readonly db: Db) {}

  async corrections(principal: Principal, page: { limit?: number; cursor?: string }): Promise<Page<Correction>> {
    // The signature is a correction's id: the page's cursor.
    return paginate<CorrectionRow & { id: string }, Correction>(
      this.db('ai_triage_corrections').where('project_id', principal.projectId).select('*', 'signature as id'),
      page,
      correctionView,
      'signature',
    );
  }

  /** Sets (or replaces) the category of a signature. */
  async correct(
    principal: Principal,
    body: { signature: string; category: TriageCategory; note?: string },
  ): Promise<Correction> {
    const [row] = await this.db('ai_triage_corrections')
      .insert({
        project_id: principal.projectId,
        signature: body.signature,
        category: body.category,
        note: body.note ?? null,
        created_by: principal.keyId,
      })
      .onConflict(['project_id', 'signature'])
      .merge({
        category: body.category,
        note: body.note ?? null,
        created_by: principal.keyId,
        updated_at: this.db.fn.now(),
      })
      .returning('*');
    return correctionView(row);
  }

  async uncorrect(principal: Principal, signature: string): Promise<void> {
    const deleted = await this.db('ai_triage_corrections')
      .where({ project_id: principal.projectId, signature })
      .delete();
    if (!deleted) throw errors.notFound('Correction', signature);
  }

  async correctionsOf(projectId: string, signatures: readonly string[]): Promise<Map<string, Correction>> {
    if (signatures.length === 0) return new Map();
    const rows = await this.db('ai_triage_corrections')
      .where('project_id', projectId)
      .whereIn('signature', [...signatures]);
    return new Map(rows.map((r: CorrectionRow) => [r.signature, correctionView(r)]));
  }

  async rules(principal: Principal, page: { limit?: number; cursor?: string }): Promise<Page<TriageRule>> {
    return paginate(this.db('ai_triage_rules').where('project_id', principal.projectId), page, ruleView);
  }

  /** Every rule of the project, oldest first (the order in which they are tried). */
  async allRules(projectId: string): Promise<TriageRule[]> {
    const rows = await this.db('ai_triage_rules').where('project_id', projectId).orderBy('id').limit(1000);
    return rows.map(ruleView);
  }

  async addRule(
    principal: Principal,
    body: { field?: 'signature' | 'message'; pattern: string; category: TriageCategory; note?: string },
  ): Promise<TriageRule> {
    const [row] = await this.db('ai_triage_rules')
      .insert({
        id: newId(IdPrefix.triageRule),
        project_id: principal.projectId,
        field: body.field ?? 'message',
        pattern: body.pattern,
        category: body.category,
        note: body.note ?? null,
        created_by: principal.keyId,
      })
      .returning('*');
    return ruleView(row);
  }

  async rule(principal: Principal, id: string): Promise<TriageRule> {
    const row = await this.db('ai_triage_rules').where({ project_id: principal.projectId, id }).first();
    if (!row) throw errors.notFound('Triage rule', id);
    return ruleView(row);
  }

  async removeRule(principal: Principal, id: string): Promise<void> {
    const deleted = await this.db('ai_triage_rules').where({ project_id: principal.projectId, id }).delete();
    if (!deleted) throw errors.notFound('Triage rule', id);
  }
}
