// One claim for the free slots of many sessions, which finds each group's oldest queued run without
// walking the runs claimed before it. Measured on three processes sharing one owner's flood
// (benchmarks/RESULTS.md, queues-live): claims of a project took turns (073), one per session, and
// each took a second or more: finding a group's oldest queued run walked, in the index of queued
// runs, every run claimed since the last vacuum (their entries stay until then, and while claims and
// verdicts queue behind one another none of them can be marked dead), about 1,000 pages per run taken.
// Now:
// - each group keeps, per class, an id at or below every queued run of it (`head_after`): a claim
//   that takes a group's oldest run sets it to that run; a run queued (posted, or back in the queue)
//   lowers it. The lookup starts there.
// - a process asks once for all the sessions of a project that have room: the owners are locked once,
//   then each session takes its runs in turn by the same rule, the accounts updated by the triggers
//   after every run taken (so the shares are those of one claim after another).
// - a run the claim chose but another transaction holds (a cancel, an end) is not waited for: its
//   group gives nothing more to this claim (a wait there, holding the owners, could close a circle).
// otp_queue_claim keeps its signature and is this for one session.
import type { Knex } from 'knex';
import { CLAIM, TRIGGERS } from './070_queue.js';
import { up as claimWaits } from './073_queue_claim_waits.js';

const HEADS = `
ALTER TABLE otp_queue_groups ADD COLUMN IF NOT EXISTS head_after text[] NOT NULL DEFAULT ARRAY['', '', ''];

-- New runs: their groups activated (in key order), then counted queued or in flight; a queued run
-- lowers its group's head for its class (070, and the heads).
CREATE OR REPLACE FUNCTION otp_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN
    SELECT n.project_id, n.queue_owner, n.queue_group, min(n.created_at) AS posted,
           max(n.queue_owner_weight) AS owner_weight, max(n.queue_weight) AS weight, max(n.queue_max_in_flight) AS max_in_flight,
           count(*) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL) AS queued,
           count(*) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 0) AS q0,
           count(*) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 1) AS q1,
           count(*) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 2) AS q2,
           min(n.id) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 0) AS h0,
           min(n.id) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 1) AS h1,
           min(n.id) FILTER (WHERE n.status = 'queued' AND n.requested_session_id IS NULL AND n.queue_rank = 2) AS h2,
           count(*) FILTER (WHERE n.status = 'running') AS running,
           coalesce(sum(otp_queue_ms(n.started_at)) FILTER (WHERE n.status = 'running'), 0) AS start_sum,
           count(*) FILTER (WHERE n.status = 'running' AND n.queue_as_gate) AS gates
      FROM new_runs n
     GROUP BY n.project_id, n.queue_owner, n.queue_group
     ORDER BY n.project_id COLLATE "C", n.queue_owner COLLATE "C", n.queue_group COLLATE "C"
  LOOP
    PERFORM otp_queue_activate(r.project_id, r.queue_owner, r.queue_group, otp_queue_ms(r.posted),
                               r.owner_weight, r.weight, r.max_in_flight);
    UPDATE otp_queue_owners SET queued = queued + r.queued, in_flight = in_flight + r.running,
                                start_sum = start_sum + r.start_sum, gate_in_flight = gate_in_flight + r.gates
     WHERE project_id = r.project_id AND owner = r.queue_owner;
    UPDATE otp_queue_groups SET queued = queued + r.queued, in_flight = in_flight + r.running, start_sum = start_sum + r.start_sum,
                                queued_gate = queued_gate + r.q0, queued_normal = queued_normal + r.q1, queued_batch = queued_batch + r.q2,
                                head_after = ARRAY[least(head_after[1], r.h0), least(head_after[2], r.h1), least(head_after[3], r.h2)]
     WHERE project_id = r.project_id AND owner = r.queue_owner AND grp = r.queue_group;
  END LOOP;
  RETURN NULL;
END $$;

-- Runs that changed status: queued counts, runs in flight, the time held charged at their end; a
-- run back in the queue lowers its group's head for its class (070, and the heads).
CREATE OR REPLACE FUNCTION otp_queue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN
    WITH moves AS (
      SELECT n.project_id, n.queue_owner, n.queue_group, n.queue_rank,
             (CASE WHEN n.status = 'queued' AND n.requested_session_id IS NULL THEN 1 ELSE 0 END)
               - (CASE WHEN o.status = 'queued' AND o.requested_session_id IS NULL THEN 1 ELSE 0 END) AS queued,
             CASE WHEN n.status = 'queued' AND n.requested_session_id IS NULL THEN n.id END AS back,
             (CASE WHEN n.status = 'running' THEN 1 ELSE 0 END) - (CASE WHEN o.status = 'running' THEN 1 ELSE 0 END) AS running,
             (CASE WHEN n.status = 'running' THEN otp_queue_ms(n.started_at) ELSE 0 END)
               - (CASE WHEN o.status = 'running' THEN otp_queue_ms(o.started_at) ELSE 0 END) AS start_sum,
             (CASE WHEN n.status = 'running' AND n.queue_as_gate THEN 1 ELSE 0 END)
               - (CASE WHEN o.status = 'running' AND o.queue_as_gate THEN 1 ELSE 0 END) AS gates,
             CASE WHEN o.status = 'running' THEN otp_queue_ms(coalesce(n.finished_at, now())) - otp_queue_ms(o.started_at) ELSE 0 END AS held
        FROM old_runs o JOIN new_runs n ON n.id = o.id
       WHERE o.status IS DISTINCT FROM n.status)
    SELECT project_id, queue_owner, queue_group, sum(queued) AS queued,
           sum(queued) FILTER (WHERE queue_rank = 0) AS q0, sum(queued) FILTER (WHERE queue_rank = 1) AS q1,
           sum(queued) FILTER (WHERE queue_rank = 2) AS q2, min(back) FILTER (WHERE queue_rank = 0) AS h0,
           min(back) FILTER (WHERE queue_rank = 1) AS h1, min(back) FILTER (WHERE queue_rank = 2) AS h2,
           sum(running) AS running, sum(start_sum) AS start_sum, sum(gates) AS gates, sum(held) AS held
      FROM moves GROUP BY project_id, queue_owner, queue_group
     ORDER BY project_id COLLATE "C", queue_owner COLLATE "C", queue_group COLLATE "C"
  LOOP
    INSERT INTO otp_queue_owners (project_id, owner) VALUES (r.project_id, r.queue_owner) ON CONFLICT DO NOTHING;
    UPDATE otp_queue_owners SET queued = queued + r.queued, in_flight = in_flight + r.running,
                                start_sum = start_sum + r.start_sum, gate_in_flight = gate_in_flight + r.gates,
                                base = base + r.held::double precision / weight
     WHERE project_id = r.project_id AND owner = r.queue_owner;
    INSERT INTO otp_queue_groups (project_id, owner, grp) VALUES (r.project_id, r.queue_owner, r.queue_group) ON CONFLICT DO NOTHING;
    UPDATE otp_queue_groups SET queued = queued + r.queued, in_flight = in_flight + r.running,
                                start_sum = start_sum + r.start_sum, base = base + r.held::double precision / weight,
                                queued_gate = queued_gate + coalesce(r.q0, 0), queued_normal = queued_normal + coalesce(r.q1, 0),
                                queued_batch = queued_batch + coalesce(r.q2, 0),
                                head_after = ARRAY[least(head_after[1], r.h0), least(head_after[2], r.h1), least(head_after[3], r.h2)]
     WHERE project_id = r.project_id AND owner = r.queue_owner AND grp = r.queue_group;
  END LOOP;
  RETURN NULL;
END $$;`;

const CLAIM_FOR = `
-- Claims, for each session of p_sessions in turn, up to its p_limits queued runs at p_now, one at a time: the run the rule chooses
-- (choice.ts FairQueue.next: the best rank, aged, gate capped per owner; the owner with the least
-- virtual time; its group with the least; that group's oldest run of that rank), or the oldest run
-- pinned to the session when it is older. The owners with work are locked once, first, then their
-- groups, each in key order (the triggers take an owner, then its groups): a claim waits for another
-- instead of skipping what it holds (073). A group's oldest run of a class is looked for from its head
-- (head_after); a chosen run another transaction holds is passed over with the rest of its group.
-- Answers (session, run) in the order the runs were taken.
CREATE OR REPLACE FUNCTION otp_queue_claim_for(p_project text, p_sessions text[], p_limits int[], p_instance text,
                                               p_now timestamptz, p_policy jsonb)
RETURNS TABLE (session_id text, run_id text) LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := otp_queue_ms(p_now);
  to_normal bigint := coalesce((p_policy->>'batchToNormalMs')::bigint, 600000);
  to_gate bigint := coalesce((p_policy->>'normalToGateMs')::bigint, 1800000);
  gate_cap int := coalesce((p_policy->>'gateCap')::int, 2);
  owners text[];
  i int;
  sess text;
  taken int;
  g record;
  h record;
  rank int;
  waited bigint;
  best_id text;
  pinned_id text;
  as_gate boolean;
  best_key record;
  best_head int;
  cand record;
  passed text[] := '{}';
  held_id text;
BEGIN
  SELECT coalesce(array_agg(l.owner), '{}') INTO owners FROM (
    SELECT o.owner FROM otp_queue_owners o WHERE o.project_id = p_project AND o.queued > 0
     ORDER BY o.owner COLLATE "C" FOR UPDATE) l;
  FOR i IN 1 .. coalesce(array_length(p_sessions, 1), 0) LOOP
    sess := p_sessions[i];
    taken := 0;
    WHILE taken < p_limits[i] LOOP
      best_id := NULL;
      FOR g IN
        SELECT x.owner, x.grp, otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, now_ms) AS gvt,
               otp_queue_vt(o.base, o.in_flight, o.start_sum, o.weight, now_ms) AS ovt, o.gate_in_flight, x.head_after,
               x.queued_gate, x.queued_normal, x.queued_batch
          FROM otp_queue_groups x JOIN otp_queue_owners o ON o.project_id = x.project_id AND o.owner = x.owner
         WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
           AND x.owner = ANY(owners) AND NOT (x.owner || E'\\n' || x.grp) = ANY(passed)
         ORDER BY x.owner COLLATE "C", x.grp COLLATE "C"
         FOR UPDATE OF x
      LOOP
        FOR h IN
          -- Only the classes with runs queued (a lookup that finds none could read every queued run),
          -- ordered as the heads index is, so that it is the index the plan uses.
          SELECT q.id, q.queue_rank, otp_queue_ms(q.created_at) AS posted
            FROM unnest(ARRAY[0, 1, 2], ARRAY[g.queued_gate, g.queued_normal, g.queued_batch]) AS c(k, n),
                 LATERAL (SELECT * FROM otp_runs q WHERE q.project_id = p_project AND q.queue_owner = g.owner
                            AND q.queue_group = g.grp AND q.queue_rank = c.k AND q.status = 'queued'
                            AND q.requested_session_id IS NULL AND q.id >= g.head_after[c.k + 1]
                          ORDER BY q.queue_rank, q.id LIMIT 1) q
           WHERE c.n > 0
        LOOP
          waited := now_ms - h.posted;
          rank := h.queue_rank;
          IF rank = 2 THEN
            rank := CASE WHEN waited < to_normal THEN 2 WHEN waited < to_normal + to_gate THEN 1 ELSE 0 END;
          ELSIF rank = 1 THEN
            rank := CASE WHEN waited < to_gate THEN 1 ELSE 0 END;
          END IF;
          IF rank = 0 AND g.gate_in_flight >= gate_cap THEN rank := 1; END IF;
          SELECT rank AS rank, g.ovt AS ovt, g.owner COLLATE "C" AS owner, g.gvt AS gvt, g.grp COLLATE "C" AS grp,
                 h.id COLLATE "C" AS id
            INTO cand;
          IF best_id IS NULL THEN
            best_id := h.id; best_key := cand; best_head := h.queue_rank + 1;
          ELSIF (cand.rank, cand.ovt, cand.owner, cand.gvt, cand.grp, cand.id)
                < (best_key.rank, best_key.ovt, best_key.owner, best_key.gvt, best_key.grp, best_key.id) THEN
            best_id := h.id; best_key := cand; best_head := h.queue_rank + 1;
          END IF;
        END LOOP;
      END LOOP;
      -- A run pinned to this session older than the rule's choice goes first: among one group's runs
      -- (every client before queues) the order stays the oldest first, pinned or not.
      SELECT q.id INTO pinned_id FROM otp_runs q WHERE q.status = 'queued' AND q.project_id = p_project
         AND q.requested_session_id = sess ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED;
      as_gate := false;
      IF best_id IS NOT NULL THEN as_gate := best_key.rank = 0; END IF;
      IF pinned_id IS NOT NULL AND (best_id IS NULL OR pinned_id COLLATE "C" < best_id COLLATE "C") THEN
        best_id := pinned_id;
        as_gate := false;
        best_head := NULL;
      END IF;
      EXIT WHEN best_id IS NULL;
      IF best_head IS NOT NULL THEN
        held_id := NULL;
        SELECT q.id INTO held_id FROM otp_runs q WHERE q.id = best_id AND q.status = 'queued' FOR UPDATE SKIP LOCKED;
        IF held_id IS NULL THEN
          -- Held (or ended meanwhile): the group's head stays where it is, and the group gives nothing more now.
          passed := passed || (best_key.owner || E'\\n' || best_key.grp);
          CONTINUE;
        END IF;
        UPDATE otp_queue_groups x SET head_after[best_head] = best_id
         WHERE x.project_id = p_project AND x.owner = best_key.owner AND x.grp = best_key.grp;
      END IF;
      UPDATE otp_runs r SET status = 'running', session_id = sess, instance_id = p_instance, started_at = p_now,
                            queue_as_gate = as_gate
       WHERE r.id = best_id;
      session_id := sess; run_id := best_id; taken := taken + 1; RETURN NEXT;
    END LOOP;
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION otp_queue_claim(p_project text, p_session text, p_instance text, p_limit int,
                                           p_now timestamptz, p_policy jsonb)
RETURNS TABLE (run_id text) LANGUAGE sql AS $$
  SELECT c.run_id FROM otp_queue_claim_for(p_project, ARRAY[p_session], ARRAY[p_limit], p_instance, p_now, p_policy) c
$$;

-- The claimed runs with the session each went to, read by a statement after the claim (its own
-- snapshot: see 071), in the order they were taken; steps left out for the runs the claimer has.
CREATE OR REPLACE FUNCTION otp_queue_claim_rows_for(p_project text, p_sessions text[], p_limits int[], p_instance text,
                                                    p_now timestamptz, p_policy jsonb, p_known text[])
RETURNS TABLE (session_id text, id text, project_id text, vars jsonb, allowed_origins jsonb, test_cases jsonb, ord bigint,
               steps json)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  sessions text[];
  ids text[];
BEGIN
  SELECT coalesce(array_agg(q.session_id ORDER BY q.n), '{}'), coalesce(array_agg(q.run_id ORDER BY q.n), '{}')
    INTO sessions, ids
    FROM otp_queue_claim_for(p_project, p_sessions, p_limits, p_instance, p_now, p_policy) WITH ORDINALITY
         AS q(session_id, run_id, n);
  RETURN QUERY
  SELECT sessions[c.n], r.id, r.project_id, r.vars, r.allowed_origins, r.test_cases, c.n,
         CASE WHEN r.id = ANY(p_known) THEN NULL ELSE (
           SELECT json_agg(json_build_object('step_index', s.step_index, 'case_index', s.case_index, 'action', s.action,
                                             'timeout_ms', s.timeout_ms, 'continue_on_fail', s.continue_on_fail,
                                             'evidence_policy', s.evidence_policy, 'label', s.label) ORDER BY s.step_index)
             FROM otp_run_steps s WHERE s.run_id = r.id) END
    FROM unnest(ids) WITH ORDINALITY AS c(run_id, n) JOIN otp_runs r ON r.id = c.run_id
   ORDER BY c.n;
END $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(HEADS);
  await knex.raw(CLAIM_FOR);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'DROP FUNCTION IF EXISTS otp_queue_claim_rows_for(text, text[], int[], text, timestamptz, jsonb, text[])',
  );
  // otp_queue_claim as 073 left it: 070's body, which 073's up rewrites.
  await knex.raw(CLAIM);
  await claimWaits(knex);
  await knex.raw('DROP FUNCTION IF EXISTS otp_queue_claim_for(text, text[], int[], text, timestamptz, jsonb)');
  await knex.raw(TRIGGERS);
  await knex.raw('ALTER TABLE otp_queue_groups DROP COLUMN IF EXISTS head_after');
}
