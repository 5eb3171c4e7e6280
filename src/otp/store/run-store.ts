// Durable state of OTP runs, their steps and the executor sessions that drive them: every statement
// the engine makes on otp_runs, otp_run_steps and otp_sessions is a method here, so the engine holds
// no SQL. Plain knex and hand-written statements (the hottest in run-sql.ts): insertRun, claimRuns,
// recordSteps and the finish's statement are the engine's hot paths, one round trip each, prepared
// on connections of their own when the store has them.

import diagnostics from 'node:diagnostics_channel';
import type { Knex } from 'knex';
import {
  ACTIVE_RUN_STATUSES,
  type Capabilities,
  type CaseRetry,
  OtpErrorCode,
  type RunStatus,
} from '../../../machines/types.js';
import { type ChangeEvents, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import type { DedicatedConnection } from '../../db/dedicated-connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import { DEFAULT_POLICY } from '../queue/model.js';
import { retryCase } from './case-retries.js';
import { PlannedRuns } from './planned-runs.js';
import { RunFinishes, type UndrivenEnd } from './run-finish.js';
import { claimPolicy, type QueueClaims, RunSupersession } from './run-queue.js';
import { type ClaimedRun, type ClaimedRunRow, claimedRunOf, type NewRun, type StepWrite } from './run-rows.js';
import {
  CLAIM_QUEUE,
  CLAIM_RUNS,
  type FinishAnswer,
  type HotStatement,
  INSERT_RUNS,
  INSERT_SESSIONS,
  insertValues,
  preparedQuery,
  RECORD_STEPS,
  type RunFinish,
  type RunInsert,
  stepRecord,
} from './run-sql.js';
import type { RunRow } from './view-rows.js';
import { writeError } from './write-error.js';

export type { ClaimedRun, ClaimedRunRow, NewRun, PlannedStepRow, RunCaseRef, StepWrite } from './run-rows.js';
export type { FinishAnswer, RunFinish, UndrivenEnd };
export { claimedRunOf };

/**
 * Connections of the store's own for its hot statements, each prepared once per connection:
 * `steps` for the group commit of step results, `runs` for the claims and the group commit of new
 * runs, `finishes` for the group commit of verdicts (so that no claim or insert waits behind them,
 * nor for a pool's next tick).
 */
export interface StepWriteMessage {
  /** Step outcomes the statement wrote. */
  rows: number;
  /** From the statement being sent to PostgreSQL to its commit being acknowledged. */
  ms: number;
}

/** One message per group-commit statement of step results (metrics and the benchmark listen). */
export const stepWrite = diagnostics.channel('otp:step.write');

export interface RunStoreConnections {
  steps: DedicatedConnection;
  runs: DedicatedConnection;
  /** The group commit of verdicts; `runs` when not given. */
  finishes?: DedicatedConnection;
}

export class RunStore {
  private readonly inserts = new GroupCommit<RunInsert, RunRow>((inserts) => this.insertRuns(inserts));
  /**
   * Step results: while one statement is in flight, those that arrive meanwhile wait and go together
   * in the next. One in flight makes the largest batches, for the most steps per second at the least
   * CPU per step (docs/decisions.md, "Measured reasons in the hot paths").
   */
  private readonly steps = new GroupCommit<StepWrite[]>((callers) => this.sendSteps(callers.flat()), 1);
  /**
   * New sessions' rows: a connect storm's hellos go together, one prepared INSERT per batch on the
   * connection of the claims (a welcome still waits for its own row; a row that fails fails only its
   * own hello).
   */
  private readonly sessionRows = new GroupCommit<Record<string, unknown>>(async (rows) => {
    await this.hot(INSERT_SESSIONS, [JSON.stringify(rows)], this.connections?.runs);
  });
  /** Runs inserted queued here, whose steps a claim of this process need not read back. */
  readonly planned = new PlannedRuns();

  /** Without `connections` every statement goes through `db` (knex's pool). */
  constructor(
    private readonly db: Db,
    private readonly connections?: RunStoreConnections,
    /** Where a run's verdict is reported (`run.finished`), in the transaction that writes it. */
    events: ChangeEvents = noChangeEvents,
    /** The claims' order: the queue rule (fair, the default) or first come, first served (OTP_QUEUE=fifo). */
    private readonly queue: QueueClaims = { mode: 'fair' },
  ) {
    this.finishes = new RunFinishes(db, connections?.finishes ?? connections?.runs, events);
  }

  /** Every way a run ends (run-finish.ts). */
  private readonly finishes: RunFinishes;

  /** A hot statement: prepared on `connection` when the store has it, else through knex (`trx` first). */
  private async hot<R = unknown>(
    statement: HotStatement,
    values: unknown[],
    connection?: DedicatedConnection,
    trx?: Db,
  ): Promise<R[]> {
    if (!trx && connection) return (await connection.query(preparedQuery(statement, values))).rows as R[];
    return (await (trx ?? this.db).raw(statement.knexText, values as Knex.RawBinding[])).rows as R[];
  }

  /**
   * The run and all its steps, atomic; answers the run's row. The runs inserted at the same moment
   * share one statement (a group commit, on the connection of the claims). Given `startOn`, the run
   * is inserted claimed by that session and process (status running) unless a queued run waits for
   * the session (see INSERT_RUNS).
   */
  insertRun(run: NewRun, startOn?: RunInsert['startOn']): Promise<RunRow> {
    return this.inserts.submit(startOn ? { run, startOn } : { run });
  }

  /** Several runs in one statement; answers their rows in their order. The queued ones are remembered as planned. */
  private async insertRuns(inserts: RunInsert[]): Promise<RunRow[]> {
    const rows = await this.hot<RunRow>(INSERT_RUNS, insertValues(inserts), this.connections?.runs);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return inserts.map(({ run }) => {
      const row = byId.get(run.id)!;
      if (row.status === 'queued') this.planned.remember(run);
      return row;
    });
  }

  /**
   * Claims queued runs for one session: those asked for it, or for no session in particular, in the
   * queue's order (docs/queues.md).
   */
  async claimRuns(
    session: { id: string; projectId: string },
    instanceId: string,
    limit: number,
  ): Promise<ClaimedRun[]> {
    const claimed = await this.claimRunsFor(session.projectId, [{ sessionId: session.id, limit }], instanceId);
    return claimed.get(session.id) ?? [];
  }

  /**
   * Claims queued runs for several sessions of one project at once, each up to its limit: one
   * statement under the queue rule (the owners' accounts locked once for all of them), one per
   * session first come, first served (SKIP LOCKED on the runs, so several processes never wait on
   * each other). Answers each session's runs in the order they were taken.
   */
  async claimRunsFor(
    projectId: string,
    asks: Array<{ sessionId: string; limit: number }>,
    instanceId: string,
  ): Promise<Map<string, ClaimedRun[]>> {
    const wanted = asks.filter((a) => a.limit > 0);
    const claimed = new Map<string, ClaimedRun[]>(wanted.map((a) => [a.sessionId, []]));
    if (!wanted.length) return claimed;
    // One round trip: the claimed runs come back with their steps (one JSON array each), but for
    // those this process planned and still has (a few more than asked: older runs may be taken).
    const known = new Map<string, ClaimedRun>();
    for (const a of wanted) {
      for (const [id, run] of this.planned.candidates(projectId, a.sessionId, a.limit + 16)) known.set(id, run);
    }
    const rows = await this.claimRows(projectId, wanted, instanceId, [...known.keys()]);
    for (const row of rows) {
      const planned = known.get(row.id);
      if (planned) this.planned.forget(row.id);
      claimed.get(row.session_id)!.push(planned ?? claimedRunOf(row));
    }
    return claimed;
  }

  /** The claim's rows in the queue's order: the rule's (docs/queues.md), or the oldest first. */
  private async claimRows(
    projectId: string,
    asks: Array<{ sessionId: string; limit: number }>,
    instanceId: string,
    known: string[],
  ): Promise<Array<ClaimedRunRow & { session_id: string }>> {
    if (this.queue.mode === 'fair') {
      const policy = await (this.queue.policy?.(projectId) ?? DEFAULT_POLICY);
      const sessions = asks.map((a) => a.sessionId);
      const limits = asks.map((a) => a.limit);
      const values = [projectId, sessions, limits, instanceId, claimPolicy(policy), known];
      return this.hot(CLAIM_QUEUE, values, this.connections?.runs);
    }
    const each = await Promise.all(
      asks.map(async ({ sessionId, limit }) => {
        const values = [sessionId, instanceId, projectId, sessionId, limit, known];
        const rows = await this.hot<ClaimedRunRow>(CLAIM_RUNS, values, this.connections?.runs);
        return rows.sort((x, y) => (x.id < y.id ? -1 : 1)).map((row) => ({ ...row, session_id: sessionId }));
      }),
    );
    return each.flat();
  }

  /**
   * Step outcomes made durable with those of every other run arriving meanwhile (the group commit).
   * Settles when these rows are written, or fails with the reason these rows could not be (never for
   * another caller's: one run's rows are written all or nothing).
   */
  writeSteps(writes: StepWrite[]): Promise<void> {
    return this.steps.submit(writes);
  }

  private async sendSteps(writes: StepWrite[]): Promise<void> {
    const sentAt = performance.now();
    await this.recordSteps(writes);
    if (stepWrite.hasSubscribers) {
      const message: StepWriteMessage = { rows: writes.length, ms: performance.now() - sentAt };
      stepWrite.publish(message);
    }
  }

  /** The outcomes, then the case's attempt archived and its steps pending again (case-retries.ts). */
  retryCase(runId: string, writes: StepWrite[], retry: CaseRetry): Promise<void> {
    return retryCase(this.db, (w, trx) => this.recordSteps(w, trx), runId, writes, retry);
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

  /** A run's verdict, as its driver reached it (RunFinishes.finishRun). */
  finishRun(finish: RunFinish): Promise<FinishAnswer> {
    return this.finishes.finishRun(finish);
  }

  /**
   * Ends runs that no live machine drives any more: every step not yet reported is skipped with the
   * given code, every reported one is kept (RunFinishes.finishUndriven). In `trx` when given.
   */
  finishUndriven(runIds: string[], end: UndrivenEnd, trx?: Db): Promise<void> {
    return this.finishes.finishUndriven(runIds, end, trx);
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
  async requeueUnstarted(
    runId: string,
    instanceId: string,
  ): Promise<{ projectId: string; sessionId: string | null } | null> {
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
  /**
   * cancelInProgress (docs/queues.md): the group's queued runs posted before `by` end cancelled,
   * superseded by it; with `running`, its running ones are marked too and answered, to be cancelled in flight.
   */
  async supersede(
    projectId: string,
    queue: { owner: string; group: string },
    by: string,
    running: boolean,
  ): Promise<{ cancelled: string[]; running: string[] }> {
    const superseded = await new RunSupersession(this.db, this.finishes).supersede(projectId, queue, by, running);
    for (const id of superseded.cancelled) this.planned.forget(id);
    return superseded;
  }

  async cancelQueuedRun(runId: string, reason: string): Promise<boolean> {
    this.planned.forget(runId);
    return this.db.transaction(async (trx) => {
      const [queued] = await trx('otp_runs')
        .where({ id: runId, status: 'queued' })
        .update({ cancel_requested_at: trx.fn.now() })
        .returning('id');
      if (!queued) return false;
      await this.finishes.finishUndriven([runId], { status: 'cancelled', code: OtpErrorCode.cancelled, reason }, trx);
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
    await this.sessionRows.submit({
      id: session.id,
      tenant_id: session.tenantId,
      project_id: session.projectId,
      key_id: session.keyId,
      instance_id: session.instanceId,
      executor: session.executor,
      name: session.name ?? null,
      version: session.version ?? null,
      capabilities: session.capabilities,
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
    await this.finishes.finishUndriven(
      stranded,
      { status: 'error', code: OtpErrorCode.internal, reason: `session ${id} closed before the run started` },
      trx,
    );
  }
}
