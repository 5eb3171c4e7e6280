// The transfer of an open session and its running runs from one service process to another, when its
// executor resumes it on another process (docs/protocol.md, "Resuming a session"). The holder writes
// the move (`transfer`) once its runs are quiet; the new holder then reads what it needs to drive them
// on (`transferredRuns`): the runs as a claim gives them, plus the outcomes already recorded.

import { type Capabilities, FINAL_RUN_STATUSES, type StepOutcome } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import { type ClaimedRun, type ClaimedRunRow, claimedRunOf, type PlannedStepRow } from './run-store.js';

export interface TransferredSessionRow {
  id: string;
  projectId: string;
  instanceId: string;
  status: 'open' | 'closed';
  capabilities: Capabilities;
  maxParallel: number;
}

export interface TransferredRun extends ClaimedRun {
  recorded: StepOutcome[];
  /** The attempt each test case is at (runs with retries), by caseIndex. */
  attempts?: number[];
}

interface TransferredRow extends ClaimedRunRow {
  steps: Array<
    PlannedStepRow & {
      status: string;
      source: 'executor' | 'service' | null;
      duration_ms: number | null;
      error: StepOutcome['error'] | null;
      evidence: StepOutcome['evidence'] | null;
      actual: string | null;
      used_locator: unknown;
      text_replaced: string[] | null;
      attempt?: number;
    }
  > | null;
}

export class SessionTransferStore {
  constructor(private readonly db: Db) {}

  async session(id: string): Promise<TransferredSessionRow | undefined> {
    const row = await this.db('otp_sessions')
      .where({ id })
      .first('id', 'project_id', 'instance_id', 'status', 'capabilities', 'max_parallel');
    return (
      row && {
        id: row.id,
        projectId: row.project_id,
        instanceId: row.instance_id,
        status: row.status,
        capabilities: row.capabilities,
        maxParallel: row.max_parallel,
      }
    );
  }

  /**
   * The sessions (open, held by `from`) and their running runs now belong to process `to`, in one
   * transaction; answers the ids of the sessions moved (one closed or held elsewhere meanwhile is not).
   */
  async transfer(sessionIds: string[], from: string, to: string): Promise<Set<string>> {
    if (!sessionIds.length) return new Set();
    return this.db.transaction(async (trx) => {
      const moved: string[] = await trx('otp_sessions')
        .whereIn('id', sessionIds)
        .where({ instance_id: from, status: 'open' })
        .update({ instance_id: to })
        .returning('id')
        .then((rows: Array<{ id: string }>) => rows.map((row) => row.id));
      if (moved.length) {
        await trx('otp_runs')
          .whereIn('session_id', moved)
          .where({ instance_id: from, status: 'running' })
          .update({ instance_id: to });
      }
      return new Set(moved);
    });
  }

  /** What run.finished says of these finished runs (of the session), for delivering it late. */
  async finishedRuns(
    sessionId: string,
    runIds: string[],
  ): Promise<
    Array<{
      runId: string;
      status: string;
      passed: number;
      failed: number;
      skipped: number;
      total: number;
      durationMs: number;
      reason?: string;
    }>
  > {
    if (!runIds.length) return [];
    const rows = await this.db('otp_runs')
      .where('session_id', sessionId)
      .whereIn('id', runIds)
      .whereIn('status', FINAL_RUN_STATUSES)
      .orderBy('id')
      .select('id', 'status', 'passed', 'failed', 'skipped', 'total_steps', 'duration_ms', 'reason');
    return rows.map((r) => ({
      runId: r.id,
      status: r.status,
      passed: r.passed,
      failed: r.failed,
      skipped: r.skipped,
      total: r.total_steps,
      durationMs: r.duration_ms ?? 0,
      ...(r.reason ? { reason: r.reason } : {}),
    }));
  }

  /** The running runs of a session this process now holds, oldest first, with what was recorded of them. */
  async transferredRuns(sessionId: string, instanceId: string): Promise<TransferredRun[]> {
    const { rows } = await this.db.raw(
      `SELECT r.id, r.project_id, r.vars, r.allowed_origins, r.test_cases,
              (SELECT json_agg(json_build_object('step_index', s.step_index, 'case_index', s.case_index, 'action', s.action,
                        'timeout_ms', s.timeout_ms, 'continue_on_fail', s.continue_on_fail, 'evidence_policy', s.evidence_policy,
                        'label', s.label, 'status', s.status, 'source', s.source, 'duration_ms', s.duration_ms, 'error', s.error,
                        'evidence', s.evidence, 'actual', s.actual, 'used_locator', s.used_locator,
                        'text_replaced', s.text_replaced, 'attempt', s.attempt) ORDER BY s.step_index)
                 FROM otp_run_steps s WHERE s.run_id = r.id) AS steps
         FROM otp_runs r
        WHERE r.session_id = ? AND r.instance_id = ? AND r.status = 'running'
        ORDER BY r.id`,
      [sessionId, instanceId],
    );
    return (rows as TransferredRow[]).map((r) => {
      const steps = r.steps ?? [];
      const attempts: number[] = [];
      for (const s of steps) attempts[s.case_index] = Math.max(attempts[s.case_index] ?? 1, s.attempt ?? 1);
      return {
        ...claimedRunOf(r),
        ...(attempts.some((a) => a > 1) ? { attempts: Array.from(attempts, (a) => a ?? 1) } : {}),
        recorded: steps
          .filter((s) => s.status !== 'pending')
          .map((s) => ({
            stepIndex: s.step_index,
            status: s.status as StepOutcome['status'],
            source: s.source ?? 'service',
            ...(s.duration_ms !== null ? { durationMs: s.duration_ms } : {}),
            ...(s.error ? { error: s.error } : {}),
            ...(s.evidence ? { evidence: s.evidence } : {}),
            ...(s.actual !== null ? { actual: s.actual } : {}),
            ...(s.used_locator !== null ? { usedLocator: s.used_locator } : {}),
            ...(s.text_replaced !== null ? { textReplaced: s.text_replaced } : {}),
          })),
      };
    });
  }
}
