// One store for every artifact resource: rows of the `artifacts` table of one kind, fields in `data`
// (validated by the resource's schema before they get here). Every write is one transaction that
// checks the quota (create), the references and the revision (If-Match) before it changes anything.
import type { Knex } from 'knex';
import type { Principal } from '../auth/principal.js';
import { type ArtifactOperation, type ChangeEvent, type ChangeEvents, noChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import { errors, type FieldError } from '../errors.js';
import { type IdPrefix, newId } from '../ids.js';
import { checkIfMatch, type IfMatch } from '../rest/conditional.js';
import { type Page, paginateSorted } from '../rest/pagination.js';
import { applyPatch, type Data, type Rec, visibleFields, withDefaults } from '../rest/resource/definition.js';
import type { ListQuery, ResourceStore } from '../rest/resource/store.js';
import { effectiveLimits, UPGRADE_URL } from '../tiers.js';
import type { ArtifactDefinition, ArtifactSettings, StoredArtifact } from './kind.js';

export interface ArtifactStoreDeps {
  db: Db;
  /** Every artifact definition, by kind (labels of referenced kinds, references to tidy on delete). */
  registry: ReadonlyMap<string, ArtifactDefinition>;
  limits: { artifacts?: number };
  /** Where creates, updates and deletes are reported (`<kind>.created`, ...), in their transaction. */
  events?: ChangeEvents;
  settings?: ArtifactSettings;
}

export const defaultArtifactSettings: ArtifactSettings = { allowPrivateWebhookTargets: false };

const iso = (value: Date) => value.toISOString();

export function labelOfKinds(registry: ReadonlyMap<string, ArtifactDefinition>, kinds: readonly string[]): string {
  const labels = kinds.map((k) => registry.get(k)?.label ?? k);
  return labels.length > 1 ? `${labels.slice(0, -1).join(', ')} or ${labels[labels.length - 1]}` : labels[0];
}

/** Checks the quota of the principal's project inside a write transaction, holding its usage row. */
export async function checkArtifactQuota(
  trx: Knex.Transaction,
  principal: Principal,
  overrides: { artifacts?: number },
  adding = 1,
) {
  const limit = effectiveLimits(principal.tier, overrides).artifacts;
  await trx.raw('INSERT INTO project_usage (project_id) VALUES (?) ON CONFLICT (project_id) DO NOTHING', [
    principal.projectId,
  ]);
  // The row lock makes concurrent creates of one project wait in turn, so the quota is never overshot.
  const row = await trx('project_usage').where('project_id', principal.projectId).forUpdate().first('artifacts');
  const used = row?.artifacts ?? 0;
  if (used + adding > limit) {
    throw errors.quotaExceeded(
      `The artifact quota of the ${principal.tier ?? 'free'} tier (${limit}) is used up: this project holds ${used}. Delete some or upgrade`,
      { limit, used, tier: principal.tier ?? 'free' },
      UPGRADE_URL,
    );
  }
}

/** Artifacts the project holds, as its quota counts them (the counter a trigger keeps on `artifacts`). */
export async function artifactCount(db: Db, projectId: string): Promise<number> {
  const row = await db('project_usage').where('project_id', projectId).first('artifacts');
  return row?.artifacts ?? 0;
}

export class ArtifactStore implements ResourceStore {
  constructor(
    readonly def: ArtifactDefinition,
    private readonly deps: ArtifactStoreDeps,
  ) {}

  private get db(): Db {
    return this.deps.db;
  }

  toRecord(row: StoredArtifact): Rec {
    return artifactRecord(this.def, row);
  }

  /** The record as answered, read-time fields included, read inside `trx` (a write's answer and event). */
  private async decorated(trx: Knex, row: StoredArtifact): Promise<Rec> {
    const record = this.toRecord(row);
    if (this.def.hooks?.decorate) await this.def.hooks.decorate(trx, row.project_id, [record]);
    return record;
  }

  /** `<kind>.<op>` and the definition's own events for a change, in the change's transaction. */
  private async report(
    trx: Knex,
    op: ArtifactOperation,
    row: StoredArtifact,
    record: Rec,
    prev?: StoredArtifact,
  ): Promise<void> {
    if (this.def.events === false) return;
    const base = { tenantId: row.tenant_id, projectId: row.project_id };
    const events: ChangeEvent[] = [{ ...base, type: `${this.def.kind}.${op}`, data: record }];
    for (const extra of this.def.hooks?.events?.({ op, record, prev }) ?? [])
      events.push({ ...base, type: extra, data: record });
    await this.events.record(trx, events);
  }

  private async answer(rows: StoredArtifact[]): Promise<Rec[]> {
    const records = rows.map((row) => this.toRecord(row));
    if (records.length && this.def.hooks?.decorate) await this.def.hooks.decorate(this.db, rows[0].project_id, records);
    return records;
  }

  private scoped(db: Knex, principal: Principal) {
    return db<StoredArtifact>('artifacts').where({ project_id: principal.projectId, kind: this.def.kind });
  }

  private async lockRow(trx: Knex.Transaction, principal: Principal, id: string): Promise<StoredArtifact> {
    const row = await this.scoped(trx, principal).where('id', id).forUpdate().first();
    if (!row) throw errors.notFound(capitalise(this.def.label), id);
    return row as StoredArtifact;
  }

  async get(principal: Principal, id: string): Promise<Rec> {
    const row = await this.scoped(this.db, principal).where('id', id).first();
    if (!row) throw errors.notFound(capitalise(this.def.label), id);
    return (await this.answer([row as StoredArtifact]))[0];
  }

  async list(principal: Principal, query: ListQuery): Promise<Page<Rec>> {
    const q = this.scoped(this.db, principal);
    for (const field of this.def.filters) {
      const value = query[field];
      if (value === undefined) continue;
      const schema = this.def.fields[field] ?? this.def.computed?.[field];
      if (schema?.type === 'array' || !Array.isArray(value)) {
        q.whereRaw('data @> ?::jsonb', [JSON.stringify({ [field]: value })]);
      } else {
        // Any of the values: one containment each, all served by the GIN index on data.
        q.where((any) => {
          for (const v of value) any.orWhereRaw('data @> ?::jsonb', [JSON.stringify({ [field]: v })]);
        });
      }
    }
    if (query.updatedSince) q.where('updated_at', '>=', new Date(query.updatedSince));
    return paginateSorted(q, query, (rows) => this.answer(rows as StoredArtifact[]), {
      id: 'id',
      updatedAt: 'updated_at',
    });
  }

  private get events(): ChangeEvents {
    return this.deps.events ?? noChangeEvents;
  }

  private get settings(): ArtifactSettings {
    return this.deps.settings ?? defaultArtifactSettings;
  }

  async create(principal: Principal, input: Data): Promise<Rec> {
    return this.write(async (trx) => {
      await checkArtifactQuota(trx, principal, this.deps.limits);
      const next = withDefaults(this.def, input);
      await this.checkRefs(trx, principal, next, Object.keys(input));
      await this.def.hooks?.prepare?.({
        db: trx,
        principal,
        op: 'create',
        next,
        settings: this.settings,
        events: this.events,
      });
      const [inserted] = await trx('artifacts')
        .insert({
          id: newId(this.def.idPrefix as IdPrefix),
          kind: this.def.kind,
          tenant_id: principal.tenantId,
          project_id: principal.projectId,
          data: JSON.stringify(next),
          created_by: principal.keyId,
        })
        .returning('*');
      const record = await this.decorated(trx, inserted);
      await this.report(trx, 'created', inserted, record);
      return record;
    });
  }

  async update(principal: Principal, id: string, patch: Data, ifMatch: IfMatch): Promise<Rec> {
    return this.write(async (trx) => {
      const prev = await this.lockRow(trx, principal, id);
      checkIfMatch(ifMatch, prev.version, `${capitalise(this.def.label)} ${id}`);
      const next = applyPatch(this.def, prev.data, patch);
      await this.checkRefs(trx, principal, next, Object.keys(patch));
      await this.def.hooks?.prepare?.({
        db: trx,
        principal,
        op: 'update',
        next,
        prev,
        settings: this.settings,
        events: this.events,
      });
      const [updated] = await trx('artifacts')
        .where('id', id)
        .update({ data: JSON.stringify(next), version: prev.version + 1, updated_at: trx.fn.now() })
        .returning('*');
      const record = await this.decorated(trx, updated);
      await this.report(trx, 'updated', updated, record, prev);
      return record;
    });
  }

  async remove(principal: Principal, id: string, ifMatch: IfMatch): Promise<void> {
    await this.db.transaction(async (trx) => {
      const prev = await this.lockRow(trx, principal, id);
      checkIfMatch(ifMatch, prev.version, `${capitalise(this.def.label)} ${id}`);
      await this.def.hooks?.beforeDelete?.({ db: trx, principal, prev });
      // The event carries the record as it was last answered.
      const record = this.def.events === false ? undefined : await this.decorated(trx, prev);
      await trx('artifacts').where('id', id).delete(); // links go with it (ON DELETE CASCADE)
      await this.forgetReferences(trx, principal, prev);
      if (record) await this.report(trx, 'deleted', prev, record, prev);
    });
  }

  /** A write transaction; a duplicate of a unique field becomes 409 naming the field. */
  private async write<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      if (e.code === '23505' && this.def.unique?.length) {
        const field = this.def.unique.find((f) => e.constraint?.includes(f)) ?? this.def.unique[0];
        throw errors.conflict(`Another ${this.def.label} of this project has the same ${field}`, {
          field: `body.${field}`,
        });
      }
      throw err;
    }
  }

  /** Every reference field written must name an artifact of the project, of a kind it may name. */
  private async checkRefs(trx: Knex.Transaction, principal: Principal, data: Data, written: string[]): Promise<void> {
    const wanted: Array<{ field: string; id: string; kinds: string[] }> = [];
    for (const [field, kinds] of Object.entries(this.def.refs ?? {})) {
      if (!written.includes(field)) continue;
      const value = data[field];
      if (Array.isArray(value))
        for (const [i, id] of value.entries()) wanted.push({ field: `body.${field}[${i}]`, id: String(id), kinds });
      else if (typeof value === 'string') wanted.push({ field: `body.${field}`, id: value, kinds });
    }
    if (!wanted.length) return;
    const ids = [...new Set(wanted.map((w) => w.id))];
    const rows: Array<{ id: string; kind: string }> = await trx('artifacts')
      .where('project_id', principal.projectId)
      .whereIn('id', ids)
      .select('id', 'kind');
    const kindOf = new Map(rows.map((r) => [r.id, r.kind]));
    const { registry } = this.deps;
    const problems: FieldError[] = wanted.flatMap(({ field, id, kinds }) => {
      const kind = kindOf.get(id);
      if (!kind) return [{ field, message: `${labelOfKinds(registry, kinds)} ${id} not found in this project` }];
      if (!kinds.includes(kind)) {
        return [
          { field, message: `${id} is a ${labelOfKinds(registry, [kind])}, not a ${labelOfKinds(registry, kinds)}` },
        ];
      }
      return [];
    });
    if (problems.length)
      throw errors.validation(
        `Unknown ${labelOfKinds(registry, this.def.refs ? Object.values(this.def.refs).flat() : [])} references`,
        problems,
      );
  }

  /**
   * A deleted artifact leaves no dangling reference behind: fields that may change drop it (a scalar
   * field goes, an array loses the element) and the records they belong to get a new revision.
   * Fields fixed at creation (a result's test case) keep it, as history.
   */
  private async forgetReferences(trx: Knex.Transaction, principal: Principal, gone: StoredArtifact): Promise<void> {
    for (const def of this.deps.registry.values()) {
      for (const [field, kinds] of Object.entries(def.refs ?? {})) {
        if (!kinds.includes(gone.kind) || def.immutable?.includes(field)) continue;
        const many = (def.fields[field] as { type?: string }).type === 'array';
        const newData = many
          ? trx.raw('jsonb_set(data, ARRAY[?::text], (data -> ?::text) - ?::text)', [field, field, gone.id])
          : trx.raw('data - ?::text', [field]);
        await trx('artifacts')
          .where({ project_id: principal.projectId, kind: def.kind })
          .whereRaw('data @> ?::jsonb', [JSON.stringify({ [field]: many ? [gone.id] : gone.id })])
          .update({ data: newData, version: trx.raw('version + 1'), updated_at: trx.fn.now() });
      }
    }
  }
}

/** An artifact row as answered: its visible fields, then the system fields (artifactSystemFields, kind.ts). */
export function artifactRecord(def: ArtifactDefinition, row: StoredArtifact): Rec {
  return {
    id: row.id,
    ...visibleFields(def, row.data),
    projectId: row.project_id,
    version: row.version,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function capitalise(text: string): string {
  return text[0].toUpperCase() + text.slice(1);
}
