// Release readiness (docs/releases.md): the facts of a release judged by the rules with the project's
// thresholds, against the previous readiness. A readiness whose state differs from the last one kept
// is kept (readiness_snapshots), so "new failures" always compare with the state before this one; a
// kept one whose verdict differs reports release.readiness_changed, in the same transaction.
// Readiness is computed when asked (REST, MCP, console), and, for projects with a webhook
// subscription, again shortly after each change that may move it (ReadinessWatch below).
import type { Knex } from 'knex';
import { type ChangeEvent, type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { IdPrefix, newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import { releaseFacts } from './facts.js';
import {
  evaluate,
  failingCases,
  type PreviousReadiness,
  type ReadinessThresholds,
  type RuleResult,
  type Verdict,
  verdictOf,
} from './rules.js';

/** The project's thresholds: declared here, implemented by the platform room's settings (wired in src/service.ts). */
export interface ReadinessThresholdsSource {
  readinessThresholds(projectId: string): Promise<ReadinessThresholds>;
}

interface SnapshotRow {
  verdict: Verdict;
  rules: Array<{ id: string; status: string; effect: string }>;
  failing_case_ids: string[];
  computed_at: Date;
}

/** What identifies a state: the failing cases and each rule's status, but the one that compares with the previous state. */
const stateOf = (rules: Array<{ id: string; status: string }>, failing: string[]) =>
  JSON.stringify([failing, rules.filter((r) => r.id !== 'new_failures').map((r) => [r.id, r.status])]);

const previousOf = (row: SnapshotRow | undefined): PreviousReadiness | null =>
  row ? { verdict: row.verdict, failingCaseIds: row.failing_case_ids, computedAt: row.computed_at } : null;

export class ReleaseReadiness {
  constructor(
    private readonly db: Db,
    private readonly thresholds: ReadinessThresholdsSource,
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  async compute(projectId: string, releaseId: string) {
    const thresholds = await this.thresholds.readinessThresholds(projectId);
    return this.db.transaction(async (trx) => {
      // One computation of a release at a time: two would each keep a snapshot of the same change.
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`readiness:${releaseId}`]);
      const facts = await releaseFacts(trx, projectId, releaseId);
      const kept: SnapshotRow[] = await trx('readiness_snapshots')
        .where({ project_id: projectId, release_id: releaseId })
        .orderBy('computed_at', 'desc')
        .orderBy('id', 'desc')
        .limit(2)
        .select('verdict', 'rules', 'failing_case_ids', 'computed_at');
      const failing = failingCases(facts);
      const state = stateOf(evaluate(facts, thresholds, null), failing);
      const unchanged = kept[0] && stateOf(kept[0].rules, kept[0].failing_case_ids) === state;
      // Unchanged: this is still the last kept state, judged against the one before it.
      const previous = previousOf(unchanged ? kept[1] : kept[0]);
      const rules = evaluate(facts, thresholds, previous);
      const verdict = verdictOf(rules);
      const computedAt = unchanged ? kept[0]!.computed_at : new Date();
      // The verdict it had before this one: states kept since with the same verdict (a background
      // recompute after each change keeps one per change) do not hide where it came from.
      const before = await trx('readiness_snapshots')
        .where({ project_id: projectId, release_id: releaseId })
        .whereNot('verdict', verdict)
        .orderBy('computed_at', 'desc')
        .orderBy('id', 'desc')
        .first('verdict');
      const readiness = {
        releaseId,
        releaseName: facts.release.name,
        verdict,
        previousVerdict: (before?.verdict as Verdict | undefined) ?? null,
        computedAt: computedAt.toISOString(),
        previousComputedAt: previous?.computedAt.toISOString() ?? null,
        thresholds,
        scope: {
          requirementIds: facts.requirements.map((r) => r.id),
          testPlanIds: facts.planIds,
          testRunIds: facts.runIds,
          testCases: facts.scopeCaseIds.length,
        },
        rules,
      };
      if (!unchanged)
        await this.keep(trx, facts.release, readiness, rules, failing, computedAt, kept[0]?.verdict ?? null);
      return readiness;
    });
  }

  private async keep(
    trx: Knex.Transaction,
    release: { id: string; tenantId: string; projectId: string },
    readiness: { verdict: Verdict },
    rules: RuleResult[],
    failing: string[],
    computedAt: Date,
    lastVerdict: Verdict | null,
  ) {
    await trx('readiness_snapshots').insert({
      id: newId(IdPrefix.readinessSnapshot),
      project_id: release.projectId,
      release_id: release.id,
      verdict: readiness.verdict,
      rules: JSON.stringify(rules.map((r) => ({ id: r.id, status: r.status, effect: r.effect }))),
      failing_case_ids: JSON.stringify(failing),
      computed_at: computedAt,
    });
    if (readiness.verdict === lastVerdict) return;
    const event: ChangeEvent = {
      type: EventType.releaseReadinessChanged,
      tenantId: release.tenantId,
      projectId: release.projectId,
      data: readiness as unknown as Record<string, unknown>,
    };
    await this.events.record(trx, event);
  }

  /** Releases of the project still to ship (planned, in progress): those a change may move. */
  async openReleases(projectId: string): Promise<string[]> {
    return this.db('artifacts')
      .where({ project_id: projectId, kind: 'release' })
      .whereRaw(`data->>'status' IN ('planned', 'in_progress')`)
      .pluck('id');
  }
}

// Event types of changes that cannot move a readiness.
const IGNORED =
  /^(webhook|kb_article|memory|note|ticket|milestone|specification)\.|^release\.readiness_changed$|^run\.|^recording\./;

/**
 * Recomputes the open releases of a project shortly after a change that may move them, when the
 * project has a webhook subscription (else readiness is computed only when asked): the events of
 * each write pass through `wrap(events)`, and a link change calls `touch`.
 */
export class ReadinessWatch {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly readiness: ReleaseReadiness,
    private readonly events: ChangeEvents,
    private readonly log: Logger,
    private readonly delayMs = 100,
  ) {}

  wrap(): ChangeEvents {
    const { events } = this;
    return {
      mayRecord: (projectId) => events.mayRecord(projectId),
      subscriptionsChanging: (projectId) => events.subscriptionsChanging(projectId),
      record: async (trx, list) => {
        await events.record(trx, list);
        const projects = new Set(
          (Array.isArray(list) ? list : [list as ChangeEvent])
            .filter((e) => !IGNORED.test(e.type))
            .map((e) => e.projectId),
        );
        if (!projects.size) return;
        // After the change commits: a computation before it would not see it.
        const committed =
          (trx as unknown as { executionPromise?: Promise<unknown> }).executionPromise ?? Promise.resolve();
        committed.then(
          () => {
            for (const p of projects) this.touch(p);
          },
          () => {},
        );
      },
    };
  }

  touch(projectId: string): void {
    if (this.stopped || this.pending.has(projectId)) return;
    const timer = setTimeout(() => {
      this.pending.delete(projectId);
      const work = this.recompute(projectId).catch((err) =>
        this.log.error('readiness recomputation failed', { err, projectId }),
      );
      this.running.add(work);
      void work.finally(() => this.running.delete(work));
    }, this.delayMs);
    timer.unref();
    this.pending.set(projectId, timer);
  }

  private async recompute(projectId: string): Promise<void> {
    if (!(await this.events.mayRecord(projectId))) return;
    for (const releaseId of await this.readiness.openReleases(projectId))
      await this.readiness.compute(projectId, releaseId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    await Promise.all(this.running);
  }
}
