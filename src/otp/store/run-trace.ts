// The run machine's transitions kept with the run (otp_runs.trace, db/migrations/008): the driver keeps
// the last TRACE_LIMIT in memory, the engine flushes the new ones of running runs every
// OTP_TRACE_FLUSH_MS in one statement for all of them, and the verdict's own statement
// (RunStore.finishRun) writes the last.
// Nothing is written per step: the step path stays one statement per group commit.

import type { RunStatus } from '../../../machines/types.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';

/** The most transitions kept per run; older ones are dropped (and counted). */
export const TRACE_LIMIT = 500;

/** One transition of the run machine: the event, the state it left and the state it entered. */
export interface TraceEntry {
  /** ISO time. */
  at: string;
  /** The event type; `always` for an eventless transition, `after <delay>` for a delayed one. */
  event: string;
  /** Dotted state path without the machine id; null for the initial entry. */
  from: string | null;
  to: string;
  /**
   * The run's cursor after the transition: the step sent on entering `running`, else the next step to
   * send; every step before it is decided. Absent from traces written before it was recorded.
   */
  cursor?: number;
  /**
   * The frames the transition sent to the executor (run.start, step.exec, run.cancel, run.finished),
   * as the machine's definition says (machines/run.sends.ts). Kept with the run for the console's
   * time line; not part of the REST answer (`restTrace`). Absent when it sent none, and from traces
   * written before it was recorded.
   */
  sends?: readonly string[];
}

/** The trace as REST answers it (OtpRunTrace): each transition without the frames it sent. */
export function restTrace(trace: RunTrace): RunTrace {
  return { ...trace, transitions: trace.transitions.map(({ sends: _sends, ...entry }) => entry) };
}

export interface RunTrace {
  runId: string;
  status: RunStatus;
  transitions: TraceEntry[];
  /** Transitions older than the kept ones that were dropped. */
  dropped: number;
  /** True when read from the process that drives the run (the latest); false: as last flushed. */
  live: boolean;
}

export interface TraceWrite {
  runId: string;
  transitions: TraceEntry[];
  dropped: number;
  /** The transitions follow the ones last written (kept to the last TRACE_LIMIT); else they replace them. */
  append?: boolean;
}

// Only running runs: a late flush must never overwrite the trace the verdict wrote. An append sends
// only the transitions since the last flush, so a flush costs the service what changed, not every
// running run's whole trace each time; the database keeps the newest TRACE_LIMIT.
const FLUSH_SQL = `
UPDATE otp_runs r
   SET trace = CASE WHEN NOT v.append OR r.trace IS NULL THEN v.trace ELSE (
                 SELECT jsonb_agg(k.e ORDER BY k.i) FROM (
                   SELECT t.e, t.i FROM jsonb_array_elements(r.trace || v.trace) WITH ORDINALITY AS t(e, i)
                    ORDER BY t.i DESC LIMIT ${TRACE_LIMIT}) k) END,
       trace_dropped = v.dropped
  FROM jsonb_to_recordset(?::jsonb) AS v(run_id text, trace jsonb, dropped int, append boolean)
 WHERE r.id = v.run_id AND r.status = 'running'`;

export class RunTraceStore {
  constructor(private readonly db: Db) {}

  /** The traces of several running runs, in one statement. */
  async flush(writes: TraceWrite[]): Promise<void> {
    if (!writes.length) return;
    const batch = writes.map((w) => ({
      run_id: w.runId,
      trace: w.transitions,
      dropped: w.dropped,
      append: w.append ?? false,
    }));
    await this.db.raw(FLUSH_SQL, [JSON.stringify(batch)]);
  }

  /** The trace as last written; 404 when the project has no such run. */
  async read(projectId: string, runId: string): Promise<RunTrace> {
    const row = await this.db('otp_runs')
      .where({ id: runId, project_id: projectId })
      .first('status', 'trace', 'trace_dropped');
    if (!row) throw errors.notFound('Run', runId);
    return { runId, status: row.status, transitions: row.trace ?? [], dropped: row.trace_dropped ?? 0, live: false };
  }
}
