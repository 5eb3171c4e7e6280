// A claim waits for the accounts another claim (or a post, or a run's end) holds, instead of
// skipping them. With SKIP LOCKED, a claim that met the rows of a project's owner while another
// claim held them found nothing to take, and its session's slot stayed empty until the next wake:
// three processes sharing one owner's flood kept about 2 of 200 slots busy (benchmarks/RESULTS.md,
// queues-live). A claim is one short statement; waiting for one costs milliseconds. The owners with
// work are locked first, then their groups, each in key order, so a claim and the triggers (which take
// an owner, then its groups) never wait on each other in a circle.
import type { Knex } from 'knex';
import { CLAIM } from './070_queue.js';

const SKIPPING = `       WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
       FOR UPDATE OF x, o SKIP LOCKED`;
const WAITING = `       WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
         AND x.owner = ANY(owners)
       ORDER BY x.owner COLLATE "C", x.grp COLLATE "C"
       FOR UPDATE OF x`;
// The owners with work, locked once before the first choice (an owner that gets work during the
// claim waits for the next claim): all of them before any group, so that no group is held while an
// owner is waited for.
const START = `BEGIN
  WHILE taken < p_limit LOOP`;
const OWNERS_FIRST = `BEGIN
  SELECT coalesce(array_agg(l.owner), '{}') INTO owners FROM (
    SELECT o.owner FROM otp_queue_owners o WHERE o.project_id = p_project AND o.queued > 0
     ORDER BY o.owner COLLATE "C" FOR UPDATE) l;
  WHILE taken < p_limit LOOP`;
const DECLARED = `  cand record;
BEGIN`;
const DECLARED_OWNERS = `  cand record;
  owners text[];
BEGIN`;

function replaced(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error('073: otp_queue_claim is not the function of 070');
  return text.replace(from, to);
}

export async function up(knex: Knex): Promise<void> {
  const declared = replaced(CLAIM, DECLARED, DECLARED_OWNERS);
  await knex.raw(replaced(replaced(declared, START, OWNERS_FIRST), SKIPPING, WAITING));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(CLAIM);
}
