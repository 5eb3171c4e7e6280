// Durable state of OTP runs, their steps and the executor sessions that drive them: every statement
// the engine makes on otp_runs, otp_run_steps and otp_sessions is a method here, so the engine holds
// no SQL. Plain knex and hand-written statements (the hottest in run-sql.ts): insertRun, claimRuns,
// recordSteps and the finish's statement are the engine's hot paths, one round trip each, prepared
// on connections of their own when the store has them.
import type { Db } from '../../db/connect.js';
import type { DedicatedConnection } from '../../db/dedicated-connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import { EventType, noChangeEvents, type ChangeEvent, type ChangeEvents } from '../../db/change-events.js';
import {
  ACTIVE_RUN_STATUSES,
  type Capabilities,
  type FinalRunStatus,
  type RunStatus,
} from '../../../machines/types.js';
import { runSummary } from './run-views.js';
import { writeError } from './write-error.js';
import { PlannedRuns } from './planned-runs.js';
import { claimedRunOf, type ClaimedRun, type ClaimedRunRow, type NewRun, type StepWrite } from './run-rows.js';
import {
  CLAIM_RUNS,
  FINISH_REPORTED_RUNS,
  FINISH_RUNS,
  INSERT_RUNS,
  insertValues,
  RECORD_STEPS,
  finishAnswer,
  finishValues,
  preparedQuery,
  stepRecord,
  type FinishAnswer,
  type FinishedRow,
  type HotStatement,
  type RunFinish,
  type RunInsert,
} from './run-sql.js';

export type { FinishAnswer, RunFinish };
export { claimedRunOf };
export type { ClaimedRun, ClaimedRunRow, NewRun, PlannedStepRow, RunCaseRef, StepWrite } from './run-rows.js';

/**
 * Connections of the store's own for its hot statements, each prepared once per connection:
 * `steps` for the group commit of step results, `runs` for the claims and the group commit of new
 * runs, `finishes` for the group commit of verdicts (so that no claim or insert waits behind them,
 * nor for a pool's next tick).
 */
export interface RunStoreConnections {
  steps: DedicatedConnection;
  runs: DedicatedConnection;
  /** The group commit of verdicts; `runs` when not given. */
  finishes?: DedicatedConnection;
}

export class RunStore {
  private readonly finishes = new GroupCommit<RunFinish, FinishAnswer>((finishes) => this.finishRuns(finishes));
  private readonly inserts = new GroupCommit<RunInsert, Record<string, unknown>>((inserts) => this.insertRuns(inserts));
  /** Runs inserted queued here, whose steps a claim of this process need not read back. */
  readonly planned = new PlannedRuns();

  /** Without `connections` every statement goes through `db` (knex's pool). */
  constructor(
    private readonly db: Db,
    private readonly connections?: RunStoreConnections,
    /** Where a run's verdict is reported (`run.finished`), in the transaction that writes it. */
    private readonly events: ChangeEvents = noChangeEvents,
  ) {}

  /** A hot statement: prepared on `connection` when the store has it, else through knex (`trx` first). */
  private async hot<R = any>(statement: HotStatement, values: unknown[], connection?: DedicatedConnection, trx?: Db): Promise<R[]> {
    if (!trx && connection) return (await connection.query(preparedQuery(statement, values))).rows as R[];
    return (await (trx ?? this.db).raw(statement.knexText, values as any[])).rows as R[];
  }

  /** `run.finished` for runs that have just reached their verdict (rows as RETURNING * gives them). */
  private async reportFinished(trx: Db, rows: unknown[]): Promise<void> {
    const events: ChangeEvent[] = rows.map((row: any) => ({
      type: EventType.runFinished,
      tenantId: row.tenant_id,
      projectId: row.project_id,
      data: runSummary(row),
    }));
    await this.events.record(trx, events);
  }

  /**
   * The run and all its steps, atomic; answers the run's row. The runs inserted at the same moment
   * share one statement (a group commit, on the connection of the claims). Given `startOn`, the run
   * is inserted claimed by that session and process (status running) unless a queued run waits for
   * the session (see INSERT_RUNS).
   */
  insertRun(run: NewRun, startOn?: RunInsert['startOn']): Promise<Record<string, unknown>> {
    return this.inserts.submit(startOn ? { run, startOn } : { run });
  }

  /** Several runs in one statement; answers their rows in their order. The queued ones are remembered as planned. */
  private async insertRuns(inserts: RunInsert[]): Promise<Record<string, unknown>[]> {
    const rows = await this.hot<Record<string, unknown>>(INSERT_RUNS, insertValues(inserts), this.connections?.runs);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return inserts.map(({ run }) => {
      const row = byId.get(run.id)!;
      if (row.status === 'queued') this.planned.remember(run);
      return row;
    });
  }

  /**
   * Claims queued runs for one session: those asked for it, or for no session in particular, oldest
   * first. SKIP LOCKED lets several service processes claim from one queue without waiting on each other.
   */
  async claimRuns(session: { id: string; projectId: string }, instanceId: string, limit: number): Promise<ClaimedRun[]> {
    if (limit <= 0) return [];
    // One round trip: the claimed runs come back with their steps (one JSON array each), but for
    // those this process planned and still has (a few more than asked: older runs may be taken).
    const known = this.planned.candidates(session.projectId, session.id, limit + 16);
    const values = [session.id, instanceId, session.projectId, session.id, limit, [...known.keys()]];
    const rows = await this.hot<ClaimedRunRow>(CLAIM_RUNS, values, this.connections?.runs);
    // Keep the queue order (oldest first) for the caller.
    return rows
      .sort((x, y) => (x.id < y.id ? -1 : 1))
      .map((row) => {
        const planned = known.get(row.id);
        if (!planned) return claimedRunOf(row);
        this.planned.forget(row.id);
        return planned;
      });
  }

  /** The outcomes, in one statement: inside `trx` when given, else on the group commit's own connection. */
  async recordSteps(writes: StepWrite[], trx?: Db): Promise<void> {
    if (!writes.length) return;
    const values = [JSON.stringify(writes.map(stepRecord)), writes.length];
    try {
      await this.hot(RECORD_STEPS, values, this.connections?.steps, trx);
    } catch (err) {
      throw writeError(err);
    }
  }

  /**
   * The last outcomes and the verdict. When a webhook subscription of the project may want to hear
   * of it, in a transaction of its own that reports the verdict too; otherwise in a group commit
   * with the other runs finishing at the same moment (one statement for all). Answers the run's
   * duration and whether it owes test results (it has a test run).
   */
  async finishRun(input: RunFinish): Promise<FinishAnswer> {
    try {
      if (!(await this.events.mayRecord(input.projectId))) return await this.finishes.submit(input);
      return await this.db.transaction(async (trx) => {
        const rows = await this.hot(FINISH_REPORTED_RUNS, finishValues([input]), undefined, trx);
        await this.reportFinished(trx, rows);
        return finishAnswer(rows[0]);
      });
    } catch (err) {
      throw writeError(err);
    }
  }

  /** The verdicts of several runs in one statement; answers in their order. */
  private async finishRuns(finishes: RunFinish[]): Promise<FinishAnswer[]> {
    const rows = await this.hot<FinishedRow>(FINISH_RUNS, finishValues(finishes), this.connections?.finishes ?? this.connections?.runs);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return finishes.map((f) => finishAnswer(byId.get(f.runId)));
  }

  /**
   * Finishes runs that no live actor drives any more (queued and cancelled, pinned to a closed
   * session, or held by a process that stopped): every step not yet reported is recorded with the
   * given code, every reported one is kept, and the counts come from the step rows.
   */
  async finishOrphanedRuns(
    runIds: string[],
    verdict: { status: FinalRunStatus; code: string; reason: string },
    /** The caller's transaction (InstanceStore.release); else one of its own. */
    trx?: Db,
  ): Promise<void> {
    if (!runIds.length) return;
    if (trx) await this.finishOrphanedIn(trx, runIds, verdict);
    else await this.db.transaction((own) => this.finishOrphanedIn(own, runIds, verdict));
  }

  private async finishOrphanedIn(
    trx: Db,
    runIds: string[],
    verdict: { status: FinalRunStatus; code: string; reason: string },
  ): Promise<void> {
    await trx('otp_run_steps')
      .whereIn('run_id', runIds)
      .where('status', 'pending')
      .update({
        status: 'skip',
        source: 'service',
        error: JSON.stringify({ code: verdict.code, message: verdict.reason }),
        finished_at: trx.fn.now(),
      });
    const { rows: counted } = await trx.raw(
      `UPDATE otp_runs r SET status = ?, reason = ?, finished_at = now(),
              duration_ms = coalesce((extract(epoch from now() - r.started_at) * 1000)::int, 0),
              passed = c.passed, failed = c.failed, skipped = c.skipped
         FROM (SELECT run_id,
                      count(*) FILTER (WHERE status = 'pass') AS passed,
                      count(*) FILTER (WHERE status IN ('fail', 'error')) AS failed,
                      count(*) FILTER (WHERE status = 'skip') AS skipped
                 FROM otp_run_steps WHERE run_id = ANY(?) GROUP BY run_id) c
        WHERE r.id = c.run_id AND r.status = ANY(?)
       RETURNING r.*`,
      [verdict.status, verdict.reason, runIds, [...ACTIVE_RUN_STATUSES]],
    );
    // Runs without steps have no row in the counting subquery.
    const stepless = await trx('otp_runs')
      .whereIn('id', runIds)
      .whereIn('status', ACTIVE_RUN_STATUSES)
      .update({ status: verdict.status, reason: verdict.reason, finished_at: trx.fn.now(), duration_ms: 0 })
      .returning('*');
    await this.reportFinished(trx, [...counted, ...stepless]);
  }

  /** The run's status, or null when the project has no such run. */
  async runStatus(projectId: string, runId: string): Promise<RunStatus | null> {
    const row = await this.db('otp_runs').where({ id: runId, project_id: projectId }).first('status');
    return row?.status ?? null;
  }

  /**
   * Marks a run in progress as asked to cancel, for the process that holds it (its reconcile finds
   * the mark when the notice is missed). Only while it runs: a finished run never changes (its view
   * may be cached, see RunViewCache).
   */
  async requestCancel(runId: string): Promise<void> {
    await this.db('otp_runs')
      .where({ id: runId })
      .whereIn('status', ACTIVE_RUN_STATUSES)
      .whereNull('cancel_requested_at')
      .update({ cancel_requested_at: this.db.fn.now() });
  }

  /** Who queued runs wait for: each project with queued runs, by the session asked for (null: any). */
  async queuedDemand(): Promise<Array<{ projectId: string; sessionId: string | null }>> {
    const rows: Array<{ project_id: string; requested_session_id: string | null }> = await this.db('otp_runs')
      .where('status', 'queued')
      .distinct('project_id', 'requested_session_id');
    return rows.map((r) => ({ projectId: r.project_id, sessionId: r.requested_session_id }));
  }

  /** Queued runs of a project (to cancel them when the project closes). */
  queuedRunIds(projectId: string): Promise<string[]> {
    return this.db('otp_runs').where({ project_id: projectId, status: 'queued' }).pluck('id');
  }

  /** Runs a process drives. */
  runningRunIds(instanceId: string, trx: Db = this.db): Promise<string[]> {
    return trx('otp_runs').where({ instance_id: instanceId, status: 'running' }).pluck('id');
  }

  /** Runs a process drives that were asked to cancel (the cancel notice may not have reached it). */
  cancelRequestedRunIds(instanceId: string): Promise<string[]> {
    return this.db('otp_runs')
      .where({ instance_id: instanceId, status: 'running' })
      .whereNotNull('cancel_requested_at')
      .pluck('id');
  }

  /**
   * A run this process claimed but never started (its session closed or moved to another process
   * while the claim was in flight) goes back to the queue as it was. Not when it was asked to cancel,
   * or is pinned to a session that is no longer open (the session's row is locked against a
   * concurrent close): answers false, and the caller finishes it.
   */
  async requeueUnstarted(runId: string, instanceId: string): Promise<{ projectId: string; sessionId: string | null } | null> {
    const { rows } = await this.db.raw(
      `UPDATE otp_runs r SET status = 'queued', session_id = NULL, instance_id = NULL, started_at = NULL
        WHERE r.id = ? AND r.status = 'running' AND r.instance_id = ? AND r.cancel_requested_at IS NULL
          AND (r.requested_session_id IS NULL
               OR EXISTS (SELECT 1 FROM otp_sessions s WHERE s.id = r.requested_session_id AND s.status = 'open' FOR SHARE))
        RETURNING r.project_id, r.requested_session_id`,
      [runId, instanceId],
    );
    return rows[0] ? { projectId: rows[0].project_id, sessionId: rows[0].requested_session_id } : null;
  }

  /** Cancels a run that no session has claimed yet; false when it was claimed (or finished) first. */
  async cancelQueuedRun(runId: string, reason: string): Promise<boolean> {
    this.planned.forget(runId);
    return this.db.transaction(async (trx) => {
      const [claimed] = await trx('otp_runs')
        .where({ id: runId, status: 'queued' })
        .update({ status: 'cancelled', reason, finished_at: trx.fn.now(), duration_ms: 0, cancel_requested_at: trx.fn.now() })
        .returning('total_steps');
      if (!claimed) return false;
      await trx('otp_run_steps')
        .where({ run_id: runId, status: 'pending' })
        .update({ status: 'skip', source: 'service', error: JSON.stringify({ code: 'E_CANCELLED', message: reason }), finished_at: trx.fn.now() });
      const finished = await trx('otp_runs').where('id', runId).update({ skipped: claimed.total_steps }).returning('*');
      await this.reportFinished(trx, finished);
      return true;
    });
  }

  async insertSession(session: {
    id: string;
    tenantId: string;
    projectId: string;
    keyId: string;
    instanceId: string;
    executor: string;
    name?: string;
    version?: string;
    capabilities: Capabilities;
    maxParallel: number;
  }): Promise<void> {
    await this.db('otp_sessions').insert({
      id: session.id,
      tenant_id: session.tenantId,
      project_id: session.projectId,
      key_id: session.keyId,
      instance_id: session.instanceId,
      executor: session.executor,
      name: session.name ?? null,
      version: session.version ?? null,
      capabilities: JSON.stringify(session.capabilities),
      max_parallel: session.maxParallel,
    });
  }

  /** The session's status, or null when the project has no such session. */
  async sessionStatus(projectId: string, sessionId: string): Promise<'open' | 'closed' | null> {
    const row = await this.db('otp_sessions').where({ id: sessionId, project_id: projectId }).first('status');
    return row?.status ?? null;
  }

  /** Sessions a process holds open. */
  openSessionIds(instanceId: string, trx: Db = this.db): Promise<string[]> {
    return trx('otp_sessions').where({ instance_id: instanceId, status: 'open' }).pluck('id');
  }

  /** Marks a session closed and finishes the queued runs that were asked for it alone. */
  async closeSession(id: string, code: number, reason: string, trx?: Db): Promise<void> {
    const db = trx ?? this.db;
    await db('otp_sessions')
      .where({ id, status: 'open' })
      .update({ status: 'closed', closed_at: db.fn.now(), close_code: code, close_reason: reason });
    const stranded = await db('otp_runs').where({ requested_session_id: id, status: 'queued' }).pluck('id');
    await this.finishOrphanedRuns(stranded, { status: 'error', code: 'E_INTERNAL', reason: `session ${id} closed before the run started` }, trx);
  }
}
