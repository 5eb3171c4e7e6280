// Where queued runs stand (docs/queues.md, "Position and estimated start"): each one's position (the
// runs the rule starts before it, otp_queue_standing) and an estimated start as a range, from the
// pool's capacity (the slots of the project's open sessions), its group's runs in flight and the
// durations of the project's latest runs.
import type { Db } from '../../db/connect.js';
import { startWithin } from '../queue/estimate.js';
import type { RunSummary } from './view-types.js';

export type QueueStanding = NonNullable<RunSummary['queue']>;

/** How many of the project's latest finished runs the estimate's durations come from. */
const RECENT_RUNS = 100;

interface StandingRow {
  id: string;
  run_position: number;
  own_ahead: number;
  group_in_flight: number;
  slots: number;
  quick: number | null;
  slow: number | null;
  now: Date;
}

/** The range as ISO times (startWithin, src/otp/queue/estimate.ts); none while no session is open or no run has finished. */
function estimatedStart(row: StandingRow): QueueStanding['estimatedStart'] {
  if (row.quick === null || row.slow === null) return null;
  const standing = {
    position: row.run_position,
    own: row.own_ahead,
    slots: row.slots,
    groupInFlight: row.group_in_flight,
  };
  const within = startWithin(standing, row.quick, row.slow);
  if (!within) return null;
  const at = (offset: number) => new Date(row.now.getTime() + offset).toISOString();
  return { from: at(within.from), to: at(within.to) };
}

/** The standing of each of these runs that is queued (others are left out). */
export async function queueStandings(db: Db, projectId: string, runIds: string[]): Promise<Map<string, QueueStanding>> {
  const standings = new Map<string, QueueStanding>();
  if (!runIds.length) return standings;
  const { rows }: { rows: StandingRow[] } = await db.raw(
    `WITH pool AS (SELECT coalesce(sum(max_parallel), 0)::int AS slots FROM otp_sessions WHERE project_id = ? AND status = 'open'),
          recent AS (SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY duration_ms) AS quick,
                            percentile_cont(0.9) WITHIN GROUP (ORDER BY duration_ms) AS slow
                       FROM (SELECT duration_ms FROM otp_runs WHERE project_id = ? AND status IN ('passed', 'failed')
                                AND duration_ms IS NOT NULL ORDER BY id DESC LIMIT ${RECENT_RUNS}) d)
     SELECT q.id, s.run_position, s.own_ahead, s.group_in_flight, pool.slots, recent.quick, recent.slow, now() AS now
       FROM unnest(?::text[]) AS q(id), LATERAL otp_queue_standing(q.id) s, pool, recent`,
    [projectId, projectId, runIds],
  );
  for (const row of rows) standings.set(row.id, { position: row.run_position, estimatedStart: estimatedStart(row) });
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
