// Every statement on the failure tables the scan writes (db/migrations/020_ai_failures.ts): a batch of
// finished runs becomes its case outcomes, its failures and its signatures' counts in one transaction,
// idempotently (a run whose case outcomes are written already is skipped, whoever wrote them).

import { judgeCase } from '../../machines/case-outcome.js';
import type { ChangeEvent, ChangeEvents } from '../db/change-events.js';
import { EventType, noChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import { environmental, navigationFailure } from './environment.js';
import type { FinishedRunFacts, FinishedRunRef } from './facts.js';
import { isSignedFailure, type SignatureParts, signatureOf, signatureParts } from './signature.js';

interface SignedFailure {
  runId: string;
  stepIndex: number;
  /** Its number within its test case, 0-based. */
  position: number | null;
  projectId: string;
  signature: string;
  parts: SignatureParts;
  caseIndex: number;
  testCaseId: string;
  planId: string | null;
  status: string;
  message: string;
  screenshotAssetId: string | null;
  occurredAt: Date;
  /** The environment caused it (an error page, an unreachable page): it says nothing of the case. */
  environment: boolean;
}

/** A signature seen for the first time in its project: what the failure_cluster.new webhook reports. */
export interface NewCluster {
  tenantId: string;
  projectId: string;
  signature: string;
  parts: SignatureParts;
  firstSeen: Date;
  example: { runId: string; stepIndex: number; testCaseId: string };
}

/** The failed steps of a run worth a signature, signed. */
export function signFailures(run: FinishedRunFacts): SignedFailure[] {
  const firstStep = new Map(run.cases.map((c) => [c.caseIndex, c.firstStep]));
  return run.failures.filter(isSignedFailure).map((f) => {
    const parts = signatureParts({ code: f.error?.code, action: f.action, message: f.error?.message });
    const first = firstStep.get(f.caseIndex);
    return {
      runId: run.id,
      stepIndex: f.stepIndex,
      position: first === undefined ? null : f.stepIndex - first,
      projectId: run.projectId,
      signature: signatureOf(parts),
      parts,
      caseIndex: f.caseIndex,
      testCaseId: f.testCaseId,
      planId: run.planId,
      status: f.status,
      message: (f.error?.message ?? '').slice(0, 2000),
      screenshotAssetId: f.screenshotAssetId,
      occurredAt: run.finishedAt,
      environment:
        environmental(f.error?.code ?? '', f.error?.message ?? '') ||
        navigationFailure(f.lastNavigation ? [f.lastNavigation] : []) !== undefined,
    };
  });
}

/** Each case's outcome by the one rule (machines/case-outcome.ts), with the signed step that decided it. */
function caseRows(run: FinishedRunFacts, signed: SignedFailure[]) {
  return run.cases.map((c) => {
    const { outcome, failingStep } = judgeCase(c.tally);
    const first = failingStep && signed.find((f) => f.stepIndex === failingStep.stepIndex);
    return {
      run_id: run.id,
      case_index: c.caseIndex,
      project_id: run.projectId,
      test_case_id: c.testCaseId,
      outcome,
      failed_position: first ? first.position : null,
      signature: first?.signature ?? null,
      finished_at: run.finishedAt,
      environment: first?.environment ?? false,
    };
  });
}

export class FailureStore {
  constructor(
    private readonly db: Db,
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  /** Writes what the runs' verdicts say (once per run); answers the signatures new to their projects. */
  async record(runs: readonly FinishedRunFacts[]): Promise<NewCluster[]> {
    if (runs.length === 0) return [];
    return this.db.transaction(async (trx) => {
      const signedByRun = new Map(runs.map((run) => [run.id, signFailures(run)]));
      const cases = runs.flatMap((run) => caseRows(run, signedByRun.get(run.id)!));
      const { rows: inserted } = await trx.raw(
        `INSERT INTO ai_case_outcomes (run_id, case_index, project_id, test_case_id, outcome, failed_position, signature, finished_at, environment)
         SELECT * FROM json_to_recordset(?::json) AS x(run_id text, case_index int, project_id text, test_case_id text, outcome text,
                                                     failed_position int, signature text, finished_at timestamptz, environment boolean)
         ON CONFLICT DO NOTHING RETURNING run_id`,
        [JSON.stringify(cases)],
      );
      const fresh = new Set<string>(inserted.map((r: { run_id: string }) => r.run_id));
      const failures = runs.filter((run) => fresh.has(run.id)).flatMap((run) => signedByRun.get(run.id)!);
      if (failures.length === 0) return [];
      await trx.raw(
        `INSERT INTO ai_failures (run_id, step_index, position, project_id, signature, case_index, test_case_id, plan_id, status, message, screenshot_asset_id, occurred_at)
         SELECT * FROM json_to_recordset(?::json) AS x(run_id text, step_index int, position int, project_id text, signature text, case_index int, test_case_id text,
                                                     plan_id text, status text, message text, screenshot_asset_id text, occurred_at timestamptz)
         ON CONFLICT DO NOTHING`,
        [
          JSON.stringify(
            failures.map((f) => ({
              run_id: f.runId,
              step_index: f.stepIndex,
              position: f.position,
              project_id: f.projectId,
              signature: f.signature,
              case_index: f.caseIndex,
              test_case_id: f.testCaseId,
              plan_id: f.planId,
              status: f.status,
              message: f.message,
              screenshot_asset_id: f.screenshotAssetId,
              occurred_at: f.occurredAt,
            })),
          ),
        ],
      );
      // One row per signature of the batch, in key order (two batches lock the same rows in one order).
      const bySignature = new Map<string, { f: SignedFailure; first: Date; last: Date; count: number }>();
      for (const f of failures) {
        const key = `${f.projectId} ${f.signature}`;
        const seen = bySignature.get(key);
        if (!seen) bySignature.set(key, { f, first: f.occurredAt, last: f.occurredAt, count: 1 });
        else {
          seen.count++;
          if (f.occurredAt < seen.first) seen.first = f.occurredAt;
          if (f.occurredAt > seen.last) seen.last = f.occurredAt;
        }
      }
      const signatures = [...bySignature.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([, s]) => ({
          project_id: s.f.projectId,
          signature: s.f.signature,
          code: s.f.parts.code,
          action: s.f.parts.action,
          locator: s.f.parts.locator,
          message: s.f.parts.message,
          first_seen: s.first,
          last_seen: s.last,
          occurrences: s.count,
        }));
      const { rows: upserted } = await trx.raw(
        `INSERT INTO ai_failure_signatures AS s (project_id, signature, code, action, locator, message, first_seen, last_seen, occurrences)
         SELECT * FROM json_to_recordset(?::json) AS x(project_id text, signature text, code text, action text, locator text, message text,
                                                     first_seen timestamptz, last_seen timestamptz, occurrences int)
         ON CONFLICT (project_id, signature) DO UPDATE
           SET first_seen = least(s.first_seen, EXCLUDED.first_seen), last_seen = greatest(s.last_seen, EXCLUDED.last_seen),
               occurrences = s.occurrences + EXCLUDED.occurrences
         RETURNING s.project_id, s.signature, (xmax = 0) AS inserted`,
        [JSON.stringify(signatures)],
      );
      const tenants = new Map(runs.map((run) => [run.projectId, run.tenantId]));
      const created: NewCluster[] = upserted
        .filter((r: { inserted: boolean }) => r.inserted)
        .map((r: { project_id: string; signature: string }) => {
          const s = bySignature.get(`${r.project_id} ${r.signature}`)!;
          return {
            tenantId: tenants.get(r.project_id)!,
            projectId: r.project_id,
            signature: r.signature,
            parts: s.f.parts,
            firstSeen: s.first,
            example: { runId: s.f.runId, stepIndex: s.f.stepIndex, testCaseId: s.f.testCaseId },
          };
        });
      await this.report(trx, created);
      return created;
    });
  }

  /** A new cluster is reported to the project's webhooks in the transaction that makes it. */
  private async report(trx: Db, created: NewCluster[]): Promise<void> {
    const events: ChangeEvent[] = [];
    for (const c of created) {
      if (!(await this.events.mayRecord(c.projectId))) continue;
      events.push({
        type: EventType.failureClusterNew,
        tenantId: c.tenantId,
        projectId: c.projectId,
        data: { signature: c.signature, ...c.parts, firstSeen: c.firstSeen.toISOString(), example: c.example },
      });
    }
    if (events.length) await this.events.record(trx, events);
  }

  /** Where the backfill stopped: the last finished run it wrote, in (finished_at, id) order. */
  async progress(): Promise<FinishedRunRef | null> {
    const row = await this.db('ai_scan_progress').where('name', 'runs').first('finished_at', 'run_id');
    return row ? { finishedAt: row.finished_at, id: row.run_id } : null;
  }

  async advance(to: FinishedRunRef): Promise<void> {
    await this.db.raw(
      `INSERT INTO ai_scan_progress (name, finished_at, run_id) VALUES ('runs', ?, ?)
       ON CONFLICT (name) DO UPDATE SET finished_at = EXCLUDED.finished_at, run_id = EXCLUDED.run_id
        WHERE (ai_scan_progress.finished_at, ai_scan_progress.run_id) < (EXCLUDED.finished_at, EXCLUDED.run_id)`,
      [to.finishedAt, to.id],
    );
  }
}
