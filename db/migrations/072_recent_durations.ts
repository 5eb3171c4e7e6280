// Reading where a queued run stands, made cheap (src/otp/store/queue-views.ts; POST /otp/runs
// answers it for every run it queues, and had slowed to under half its rate as its queue grew):
// - the durations its estimated start is made of (the project's latest 100 finished runs) found by an
//   index of the finished runs alone; through the project's index of every run, each read walked past
//   every queued run newer than the last finished one;
// - otp_queue_standing writes the run only when what it shows falls (070 wrote it at every read, a
//   row version and the status trigger each time a console or `otp run` asked again).
import type { Knex } from 'knex';
import { POSITION } from './070_queue.js';

const WRITE_EVERY_READ = `  UPDATE otp_runs SET queue_shown_ahead = least(coalesce(queue_shown_ahead, own + same), own + same)
   WHERE id = p_run RETURNING queue_shown_ahead INTO n;`;
const WRITE_WHEN_LOWER = `  n := least(coalesce(r.queue_shown_ahead, own + same), own + same);
  IF n IS DISTINCT FROM r.queue_shown_ahead THEN
    UPDATE otp_runs SET queue_shown_ahead = least(coalesce(queue_shown_ahead, n), n)
     WHERE id = p_run RETURNING queue_shown_ahead INTO n;
  END IF;`;

function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error('072: otp_queue_standing is not the function of 070');
  return text.replace(from, to);
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX IF NOT EXISTS otp_runs_recent_durations ON otp_runs (project_id, id)
    WHERE status IN ('passed', 'failed') AND duration_ms IS NOT NULL`);
  await knex.raw(replaced(POSITION, WRITE_EVERY_READ, WRITE_WHEN_LOWER));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(POSITION);
  await knex.raw('DROP INDEX IF EXISTS otp_runs_recent_durations');
}
