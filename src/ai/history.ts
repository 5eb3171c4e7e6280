// What triage reads of the past, for every failed case of a run at once: each case's earlier
// outcomes, each signature's earlier failures (one statement each, a LATERAL index scan per key).
import { CASE_OUTCOMES, isFailingOutcome, isPassingOutcome } from '../../machines/case-outcome.js';
import type { Db } from '../db/connect.js';
import type { EarlierOutcome } from './classify.js';
import { environmental } from './environment.js';

const HISTORY = 20;
/** The outcomes that judged the case one way or the other (cancelled, skipped: they said nothing). */
const JUDGED = CASE_OUTCOMES.filter((o) => isPassingOutcome(o) || isFailingOutcome(o));
const SIMILAR = 5;

export interface EarlierFailure {
  runId: string;
  stepIndex: number;
  testCaseId: string;
  occurredAt: string;
}

export class FailureHistory {
  constructor(readonly db: Db) {}

  /**
   * Each case's outcomes on runs finished before `before`, newest first: passed, flaky (passed on a
   * retry) or failed (error too). Failures the environment caused (a dead server, a blocked
   * navigation, an error page) say nothing of the case: left out.
   */
  async caseHistories(
    projectId: string,
    testCaseIds: readonly string[],
    before: Date,
    excludeRunId: string,
  ): Promise<Map<string, EarlierOutcome[]>> {
    const found = new Map<string, EarlierOutcome[]>(testCaseIds.map((id) => [id, []]));
    if (testCaseIds.length === 0) return found;
    // The failure's message as written (ai_failures): the normalised one of its signature loses a
    // quoted error page ("503 Service Unavailable" becomes "<v>").
    const { rows } = await this.db.raw(
      `SELECT c.id AS test_case_id, h.outcome, h.code, coalesce(h.written, h.message) AS message
         FROM unnest(?::text[]) AS c(id)
         CROSS JOIN LATERAL (
           SELECT o.outcome, o.finished_at, s.code, s.message,
                  (SELECT f.message FROM ai_failures f
                    WHERE f.run_id = o.run_id AND f.case_index = o.case_index AND f.signature = o.signature
                    ORDER BY f.step_index LIMIT 1) AS written
             FROM ai_case_outcomes o LEFT JOIN ai_failure_signatures s ON s.project_id = o.project_id AND s.signature = o.signature
            WHERE o.project_id = ? AND o.test_case_id = c.id AND o.finished_at < ? AND o.run_id <> ? AND o.outcome = ANY(?)
              AND NOT o.environment
            ORDER BY o.finished_at DESC LIMIT ?) h
        ORDER BY c.id, h.finished_at DESC`,
      [[...new Set(testCaseIds)], projectId, before, excludeRunId, JUDGED, HISTORY],
    );
    for (const r of rows) {
      const failed = isFailingOutcome(r.outcome);
      if (failed && r.code && environmental(r.code, r.message ?? '')) continue;
      found.get(r.test_case_id)!.push(failed ? 'failed' : r.outcome === 'flaky' ? 'flaky' : 'passed');
    }
    return found;
  }

  /** Each signature's latest failures (at most 5) on other runs, finished no later than `before`, newest first. */
  async earlier(
    projectId: string,
    signatures: readonly string[],
    before: Date,
    excludeRunId: string,
  ): Promise<Map<string, EarlierFailure[]>> {
    const found = new Map<string, EarlierFailure[]>(signatures.map((s) => [s, []]));
    if (signatures.length === 0) return found;
    const { rows } = await this.db.raw(
      `SELECT sig.signature, f.run_id, f.step_index, f.test_case_id, f.occurred_at
         FROM unnest(?::text[]) AS sig(signature)
         CROSS JOIN LATERAL (
           SELECT run_id, step_index, test_case_id, occurred_at FROM ai_failures
            WHERE project_id = ? AND signature = sig.signature AND occurred_at <= ? AND run_id <> ?
            ORDER BY occurred_at DESC, run_id DESC LIMIT ?) f
        ORDER BY sig.signature, f.occurred_at DESC, f.run_id DESC`,
      [[...new Set(signatures)], projectId, before, excludeRunId, SIMILAR],
    );
    for (const r of rows) {
      found.get(r.signature)!.push({
        runId: r.run_id,
        stepIndex: r.step_index,
        testCaseId: r.test_case_id,
        occurredAt: r.occurred_at.toISOString(),
      });
    }
    return found;
  }
}
