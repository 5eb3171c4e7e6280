// Where queued runs stand (docs/queues.md, "Position and estimated start"): each one's position (the
// runs the rule starts before it, otp_queue_position) and an estimated start as a range, from the
// pool's capacity (the slots of the project's open sessions) and the durations of its latest runs.
import type { Db } from '../../db/connect.js';
import type { RunSummary } from './view-types.js';

export type QueueStanding = NonNullable<RunSummary['queue']>;

/** How many of the project's latest finished runs the estimate's durations come from. */
const RECENT_RUNS = 100;

interface StandingRow {
  id: string;
  position: number | null;
  slots: number;
  fast: number | null;
  slow: number | null;
  now: Date;
}

/**
 * The estimate: the slots free one by one, each once per run's duration, so the run starts once
 * `position + 1` slots have freed: at the soonest after position × (quick quartile of the recent
 * durations) / slots, at the latest after (position + 1) × (slow quartile) / slots. No range while no
 * session is open or no run has finished.
 */
export function estimatedStart(position: number, slots: number, fast: number | null, slow: number | null, now: Date) {
  if (slots <= 0 || fast === null || slow === null) return null;
  const from = new Date(now.getTime() + (position * fast) / slots);
  const to = new Date(now.getTime() + ((position + 1) * slow) / slots);
  return { from: from.toISOString(), to: to.toISOString() };
}

/** The standing of each of these runs that is queued (others are left out). */
export async function queueStandings(db: Db, projectId: string, runIds: string[]): Promise<Map<string, QueueStanding>> {
  const standings = new Map<string, QueueStanding>();
  if (!runIds.length) return standings;
  const { rows }: { rows: StandingRow[] } = await db.raw(
    `WITH pool AS (SELECT coalesce(sum(max_parallel), 0)::int AS slots FROM otp_sessions WHERE project_id = ? AND status = 'open'),
          recent AS (SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY duration_ms) AS fast,
                            percentile_cont(0.75) WITHIN GROUP (ORDER BY duration_ms) AS slow
                       FROM (SELECT duration_ms FROM otp_runs WHERE project_id = ? AND status IN ('passed', 'failed')
                                AND duration_ms IS NOT NULL ORDER BY id DESC LIMIT ${RECENT_RUNS}) d)
     SELECT q.id, otp_queue_position(q.id) AS position, pool.slots, recent.fast, recent.slow, now() AS now
       FROM unnest(?::text[]) AS q(id), pool, recent`,
    [projectId, projectId, runIds],
  );
  for (const row of rows) {
    if (row.position === null) continue;
    const estimate = estimatedStart(row.position, row.slots, row.fast, row.slow, row.now);
    standings.set(row.id, { position: row.position, estimatedStart: estimate });
  }
  return standings;
}

/** The runs given, each queued one with its standing. */
export async function withStandings<T extends RunSummary>(db: Db, projectId: string, runs: T[]): Promise<T[]> {
  const queued = runs.filter((run) => run.status === 'queued').map((run) => run.id);
  const standings = await queueStandings(db, projectId, queued);
  return runs.map((run) => {
    const queue = standings.get(run.id);
    return queue ? { ...run, queue } : run;
  });
}
