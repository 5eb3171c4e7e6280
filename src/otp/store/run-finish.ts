// Every way a run ends, through one statement (run-sql.ts, finishRunsSql): the verdict its machine
// reached (with the outcomes it decided), or, for a run no machine drives any more (cancelled while
// queued, pinned to a session that closed, held by a process that stopped, lost in a transfer), the
// end decided here from its steps by the machines' own rule (closeUndriven: the unreported steps
// skipped with the given code, the counts as a driven run counts them).

import type { Knex } from 'knex';
import { closeUndriven } from '../../../machines/run.steps.js';
import { ACTIVE_RUN_STATUSES, type FinalRunStatus, type StepOutcome } from '../../../machines/types.js';
import { type ChangeEvent, type ChangeEvents, EventType } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import type { DedicatedConnection } from '../../db/dedicated-connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import {
  FINISH_REPORTED_RUNS,
  FINISH_RUNS,
  type FinishAnswer,
  type FinishedRow,
  finishAnswer,
  finishValues,
  preparedQuery,
  type RunFinish,
} from './run-sql.js';
import { runSummary } from './run-views.js';
import type { RunRow } from './view-rows.js';
import { writeError } from './write-error.js';

/** How a run that no machine drives ends: its status, the code its unreported steps get, the reason. */
export interface UndrivenEnd {
  status: FinalRunStatus;
  code: string;
  reason: string;
}

export class RunFinishes {
  // Verdicts that arrive together share one statement, on the store's connection for them.
  private readonly commits = new GroupCommit<RunFinish, FinishAnswer>((finishes) => this.finishTogether(finishes));

  constructor(
    private readonly db: Db,
    private readonly connection: DedicatedConnection | undefined,
    /** Where a run's verdict is reported (`run.finished`), in the transaction that writes it. */
    private readonly events: ChangeEvents,
  ) {}

  /**
   * A run's verdict with its last outcomes, as its driver reached it. When a webhook subscription of
   * the project may want to hear of it, in a transaction of its own that reports the verdict too;
   * otherwise in a group commit with the other runs finishing at the same moment. Answers the run's
   * duration and whether it owes test results (it has a test run).
   */
  async finishRun(finish: RunFinish): Promise<FinishAnswer> {
    try {
      if (!(await this.events.mayRecord(finish.projectId))) return await this.commits.submit(finish);
      return await this.db.transaction(async (trx) => finishAnswer((await this.finishReported(trx, [finish]))[0]));
    } catch (err) {
      throw writeError(err);
    }
  }

  /** Ends runs no machine drives any more, unless they have ended already: in `trx` when given, else in a transaction of its own. */
  async finishUndriven(runIds: string[], end: UndrivenEnd, trx?: Db): Promise<void> {
    if (!runIds.length) return;
    if (trx) await this.finishUndrivenIn(trx, runIds, end);
    else await this.db.transaction((own) => this.finishUndrivenIn(own, runIds, end));
  }

  private async finishUndrivenIn(trx: Db, runIds: string[], end: UndrivenEnd): Promise<void> {
    // Locked: a driver's verdict of the same run waits, then finds it ended and changes nothing.
    const runs: Array<{ id: string; project_id: string; total_steps: number }> = await trx('otp_runs')
      .whereIn('id', runIds)
      .whereIn('status', ACTIVE_RUN_STATUSES)
      .forUpdate()
      .select('id', 'project_id', 'total_steps');
    if (!runs.length) return;
    const steps = new Map<string, Array<{ stepIndex: number; status: StepOutcome['status'] | 'pending' }>>();
    const rows: Array<{ run_id: string; step_index: number; status: StepOutcome['status'] | 'pending' }> = await trx(
      'otp_run_steps',
    )
      .whereIn(
        'run_id',
        runs.map((run) => run.id),
      )
      .select('run_id', 'step_index', 'status');
    for (const row of rows) {
      const list = steps.get(row.run_id) ?? [];
      list.push({ stepIndex: row.step_index, status: row.status });
      steps.set(row.run_id, list);
    }
    await this.finishReported(
      trx,
      runs.map((run) => ({
        runId: run.id,
        projectId: run.project_id,
        status: end.status,
        reason: end.reason,
        ...closeUndriven(steps.get(run.id) ?? [], run.total_steps, end.code, end.reason),
      })),
    );
  }

  /** The statement, in `trx`, with `run.finished` reported for each run it ended. */
  private async finishReported(trx: Db, finishes: RunFinish[]): Promise<FinishedRow[]> {
    const rows: Array<RunRow & FinishedRow> = (
      await trx.raw(FINISH_REPORTED_RUNS.knexText, finishValues(finishes) as Knex.RawBinding[])
    ).rows;
    const events: ChangeEvent[] = rows.map((row) => ({
      type: EventType.runFinished,
      tenantId: row.tenant_id,
      projectId: row.project_id,
      data: runSummary(row),
    }));
    await this.events.record(trx, events);
    return rows;
  }

  /** Verdicts of several runs in one statement, no report wanted; answers in their order. */
  private async finishTogether(finishes: RunFinish[]): Promise<FinishAnswer[]> {
    const values = finishValues(finishes);
    const rows: FinishedRow[] = this.connection
      ? (await this.connection.query(preparedQuery(FINISH_RUNS, values))).rows
      : (await this.db.raw(FINISH_RUNS.knexText, values as Knex.RawBinding[])).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    return finishes.map((f) => finishAnswer(byId.get(f.runId)));
  }
}
