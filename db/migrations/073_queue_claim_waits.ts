// A claim waits for the accounts another claim (or a post, or a run's end) holds, instead of
// skipping them. With SKIP LOCKED, a claim that met the rows of a project's owner while another
// claim held them found nothing to take, and its session's slot stayed empty until the next wake:
// three processes sharing one owner's flood kept about 2 of 200 slots busy (benchmarks/RESULTS.md,
// queues-live). A claim is one short statement; waiting for one costs milliseconds. The owners are
// locked first, then their groups, each in key order, so a claim and the triggers (which take an
// owner, then its groups) never wait on each other in a circle.
import type { Knex } from 'knex';
import { CLAIM } from './070_queue.js';

const SKIPPING = `    FOR g IN
      SELECT x.owner, x.grp, otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, now_ms) AS gvt,
             otp_queue_vt(o.base, o.in_flight, o.start_sum, o.weight, now_ms) AS ovt, o.gate_in_flight
        FROM otp_queue_groups x JOIN otp_queue_owners o ON o.project_id = x.project_id AND o.owner = x.owner
       WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
       FOR UPDATE OF x, o SKIP LOCKED`;
const WAITING = `    PERFORM 1 FROM otp_queue_owners o WHERE o.project_id = p_project AND o.queued > 0
      ORDER BY o.owner COLLATE "C" FOR UPDATE;
    FOR g IN
      SELECT x.owner, x.grp, otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, now_ms) AS gvt,
             otp_queue_vt(o.base, o.in_flight, o.start_sum, o.weight, now_ms) AS ovt, o.gate_in_flight
        FROM otp_queue_groups x JOIN otp_queue_owners o ON o.project_id = x.project_id AND o.owner = x.owner
       WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
       ORDER BY x.owner COLLATE "C", x.grp COLLATE "C"
       FOR UPDATE OF x, o`;

export async function up(knex: Knex): Promise<void> {
  if (!CLAIM.includes(SKIPPING)) throw new Error('073: otp_queue_claim is not the function of 070');
  await knex.raw(CLAIM.replace(SKIPPING, WAITING));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(CLAIM);
}
