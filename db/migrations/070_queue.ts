// The queue rule in PostgreSQL (docs/queues.md; the same rule as src/otp/queue, held to it by
// test/queue/sql-agreement.spec.ts). Each run gets its owner (the credential), group, class and the
// weights and limit its post was made with; small per-owner and per-group rows keep the accounts
// (virtual time charged by executor-hold time), kept by statement triggers on otp_runs so every way
// a run changes status (insert, claim, finish, cancel, requeue, a stopped process) keeps them right.
// The triggers lock those rows in one order (pool, then owners and groups by key), so two
// statements never wait on each other in a circle; a claim takes them with SKIP LOCKED.
import type { Knex } from 'knex';

const TABLES = `
ALTER TABLE otp_runs
  ADD COLUMN IF NOT EXISTS queue_owner text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS queue_group text NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS queue_rank smallint NOT NULL DEFAULT 1,
  ADD COLUMN IF NOT EXISTS queue_as_gate boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS queue_owner_weight double precision,
  ADD COLUMN IF NOT EXISTS queue_weight double precision,
  ADD COLUMN IF NOT EXISTS queue_max_in_flight int,
  ADD COLUMN IF NOT EXISTS superseded_by text,
  ADD COLUMN IF NOT EXISTS queue_shown_ahead int;

CREATE INDEX IF NOT EXISTS otp_runs_queue_heads ON otp_runs (project_id, queue_owner, queue_group, queue_rank, id)
  WHERE status = 'queued' AND requested_session_id IS NULL;
-- The runs pinned to a session, which a claim takes first: found without reading the others queued.
CREATE INDEX IF NOT EXISTS otp_runs_queue_pinned ON otp_runs (project_id, requested_session_id, id)
  WHERE status = 'queued' AND requested_session_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS otp_queue_pools (
  project_id text PRIMARY KEY,
  floor double precision NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS otp_queue_owners (
  project_id text NOT NULL,
  owner text NOT NULL,
  base double precision NOT NULL DEFAULT 0,
  in_flight int NOT NULL DEFAULT 0,
  start_sum bigint NOT NULL DEFAULT 0,
  weight double precision NOT NULL DEFAULT 1,
  gate_in_flight int NOT NULL DEFAULT 0,
  floor double precision NOT NULL DEFAULT 0,
  queued int NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, owner)
);
CREATE TABLE IF NOT EXISTS otp_queue_groups (
  project_id text NOT NULL,
  owner text NOT NULL,
  grp text NOT NULL,
  base double precision NOT NULL DEFAULT 0,
  in_flight int NOT NULL DEFAULT 0,
  start_sum bigint NOT NULL DEFAULT 0,
  weight double precision NOT NULL DEFAULT 1,
  max_in_flight int,
  queued int NOT NULL DEFAULT 0,
  -- queued runs per class (gate, normal, batch): a run's standing without counting the runs themselves
  queued_gate int NOT NULL DEFAULT 0,
  queued_normal int NOT NULL DEFAULT 0,
  queued_batch int NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, owner, grp)
);`;

const HELPERS = `
CREATE OR REPLACE FUNCTION otp_queue_ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS
$$ SELECT floor(extract(epoch FROM t) * 1000)::bigint $$;

-- An account's virtual time at now_ms (src/otp/queue/rule.ts virtualTime).
CREATE OR REPLACE FUNCTION otp_queue_vt(base double precision, in_flight int, start_sum bigint, weight double precision, now_ms bigint)
RETURNS double precision LANGUAGE sql IMMUTABLE AS
$$ SELECT base + ((in_flight::numeric * now_ms - start_sum)::double precision) / weight $$;

-- A run of (owner, group) is posted at now_ms: the owner, then the group, lifted to the system
-- virtual time when it was idle, its weights and limit taken from the post (choice.ts ownerFor, groupFor).
CREATE OR REPLACE FUNCTION otp_queue_activate(p_project text, p_owner text, p_group text, p_now bigint,
                                              p_owner_weight double precision, p_weight double precision, p_max int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  o otp_queue_owners%ROWTYPE;
  g otp_queue_groups%ROWTYPE;
  least_vt double precision;
  pool_floor double precision;
BEGIN
  INSERT INTO otp_queue_pools (project_id) VALUES (p_project) ON CONFLICT DO NOTHING;
  SELECT floor INTO pool_floor FROM otp_queue_pools WHERE project_id = p_project FOR UPDATE;
  INSERT INTO otp_queue_owners (project_id, owner) VALUES (p_project, p_owner) ON CONFLICT DO NOTHING;
  SELECT * INTO o FROM otp_queue_owners WHERE project_id = p_project AND owner = p_owner FOR UPDATE;
  IF o.queued = 0 AND o.in_flight = 0 THEN
    SELECT min(otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, p_now)) INTO least_vt
      FROM otp_queue_owners x WHERE x.project_id = p_project AND (x.queued > 0 OR x.in_flight > 0);
    pool_floor := greatest(pool_floor, coalesce(least_vt, pool_floor));
    UPDATE otp_queue_pools SET floor = pool_floor WHERE project_id = p_project;
    UPDATE otp_queue_owners SET weight = coalesce(p_owner_weight, 1), base = greatest(base, pool_floor)
     WHERE project_id = p_project AND owner = p_owner;
  END IF;
  INSERT INTO otp_queue_groups (project_id, owner, grp) VALUES (p_project, p_owner, p_group) ON CONFLICT DO NOTHING;
  SELECT * INTO g FROM otp_queue_groups WHERE project_id = p_project AND owner = p_owner AND grp = p_group FOR UPDATE;
  IF g.queued = 0 AND g.in_flight = 0 THEN
    SELECT min(otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, p_now)) INTO least_vt
      FROM otp_queue_groups x WHERE x.project_id = p_project AND x.owner = p_owner AND (x.queued > 0 OR x.in_flight > 0);
    UPDATE otp_queue_owners SET floor = greatest(floor, coalesce(least_vt, floor))
     WHERE project_id = p_project AND owner = p_owner RETURNING floor INTO pool_floor;
    UPDATE otp_queue_groups SET weight = coalesce(p_weight, 1), max_in_flight = p_max, base = greatest(base, pool_floor)
     WHERE project_id = p_project AND owner = p_owner AND grp = p_group;
  END IF;
END $$;`;

export const TRIGGERS = `
-- New runs: their groups activated (in key order), then counted queued or in flight.
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
                                queued_gate = queued_gate + r.q0, queued_normal = queued_normal + r.q1, queued_batch = queued_batch + r.q2
     WHERE project_id = r.project_id AND owner = r.queue_owner AND grp = r.queue_group;
  END LOOP;
  RETURN NULL;
END $$;

-- Runs that changed status: queued counts, runs in flight, the time held charged at their end.
CREATE OR REPLACE FUNCTION otp_queue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN
    WITH moves AS (
      SELECT n.project_id, n.queue_owner, n.queue_group, n.queue_rank,
             (CASE WHEN n.status = 'queued' AND n.requested_session_id IS NULL THEN 1 ELSE 0 END)
               - (CASE WHEN o.status = 'queued' AND o.requested_session_id IS NULL THEN 1 ELSE 0 END) AS queued,
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
           sum(queued) FILTER (WHERE queue_rank = 2) AS q2, sum(running) AS running,
           sum(start_sum) AS start_sum, sum(gates) AS gates, sum(held) AS held
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
                                queued_batch = queued_batch + coalesce(r.q2, 0)
     WHERE project_id = r.project_id AND owner = r.queue_owner AND grp = r.queue_group;
  END LOOP;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS otp_queue_inserted ON otp_runs;
CREATE TRIGGER otp_queue_inserted AFTER INSERT ON otp_runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION otp_queue_inserted();
DROP TRIGGER IF EXISTS otp_queue_changed ON otp_runs;
CREATE TRIGGER otp_queue_changed AFTER UPDATE ON otp_runs REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION otp_queue_changed();`;

export const CLAIM = `
-- Claims up to p_limit queued runs for a session at p_now, one at a time: the run the rule chooses (choice.ts FairQueue.next): the best rank
-- (aged, gate capped per owner), the owner with the least virtual time, its group with the least,
-- that group's oldest run of that rank), or the oldest run pinned to the session when it is older.
-- Groups and owners another claim holds are skipped (SKIP
-- LOCKED): that claim is choosing among them. Answers the runs' ids in the order they were taken.
CREATE OR REPLACE FUNCTION otp_queue_claim(p_project text, p_session text, p_instance text, p_limit int,
                                           p_now timestamptz, p_policy jsonb)
RETURNS TABLE (run_id text) LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := otp_queue_ms(p_now);
  to_normal bigint := coalesce((p_policy->>'batchToNormalMs')::bigint, 600000);
  to_gate bigint := coalesce((p_policy->>'normalToGateMs')::bigint, 1800000);
  gate_cap int := coalesce((p_policy->>'gateCap')::int, 2);
  taken int := 0;
  g record;
  h record;
  rank int;
  waited bigint;
  best_id text;
  pinned_id text;
  as_gate boolean;
  best_key record;
  cand record;
BEGIN
  WHILE taken < p_limit LOOP
    best_id := NULL;
    FOR g IN
      SELECT x.owner, x.grp, otp_queue_vt(x.base, x.in_flight, x.start_sum, x.weight, now_ms) AS gvt,
             otp_queue_vt(o.base, o.in_flight, o.start_sum, o.weight, now_ms) AS ovt, o.gate_in_flight
        FROM otp_queue_groups x JOIN otp_queue_owners o ON o.project_id = x.project_id AND o.owner = x.owner
       WHERE x.project_id = p_project AND x.queued > 0 AND (x.max_in_flight IS NULL OR x.in_flight < x.max_in_flight)
       FOR UPDATE OF x, o SKIP LOCKED
    LOOP
      FOR h IN
        SELECT q.id, q.queue_rank, otp_queue_ms(q.created_at) AS posted FROM generate_series(0, 2) k,
               LATERAL (SELECT * FROM otp_runs q WHERE q.project_id = p_project AND q.queue_owner = g.owner
                          AND q.queue_group = g.grp AND q.queue_rank = k AND q.status = 'queued'
                          AND q.requested_session_id IS NULL ORDER BY q.id LIMIT 1) q
      LOOP
        waited := now_ms - h.posted;
        rank := h.queue_rank;
        IF rank = 2 THEN
          rank := CASE WHEN waited < to_normal THEN 2 WHEN waited < to_normal + to_gate THEN 1 ELSE 0 END;
        ELSIF rank = 1 THEN
          rank := CASE WHEN waited < to_gate THEN 1 ELSE 0 END;
        END IF;
        IF rank = 0 AND g.gate_in_flight >= gate_cap THEN rank := 1; END IF;
        SELECT rank AS rank, g.ovt AS ovt, g.owner COLLATE "C" AS owner, g.gvt AS gvt, g.grp COLLATE "C" AS grp, h.id COLLATE "C" AS id
          INTO cand;
        IF best_id IS NULL THEN
          best_id := h.id; best_key := cand;
        ELSIF (cand.rank, cand.ovt, cand.owner, cand.gvt, cand.grp, cand.id)
              < (best_key.rank, best_key.ovt, best_key.owner, best_key.gvt, best_key.grp, best_key.id) THEN
          best_id := h.id; best_key := cand;
        END IF;
      END LOOP;
    END LOOP;
    -- A run pinned to this session older than the rule's choice goes first: among one group's runs
    -- (every client before queues) the order stays the oldest first, pinned or not.
    SELECT q.id INTO pinned_id FROM otp_runs q WHERE q.status = 'queued' AND q.project_id = p_project
       AND q.requested_session_id = p_session ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED;
    as_gate := false;
    IF best_id IS NOT NULL THEN as_gate := best_key.rank = 0; END IF;
    IF pinned_id IS NOT NULL AND (best_id IS NULL OR pinned_id COLLATE "C" < best_id COLLATE "C") THEN
      best_id := pinned_id;
      as_gate := false;
    END IF;
    EXIT WHEN best_id IS NULL;
    UPDATE otp_runs r SET status = 'running', session_id = p_session, instance_id = p_instance, started_at = p_now,
                          queue_as_gate = as_gate
     WHERE r.id = best_id;
    run_id := best_id; taken := taken + 1; RETURN NEXT;
  END LOOP;
END $$;`;

export const POSITION = `
-- How many runs start before this queued one (docs/queues.md, "Position and estimated start"): the
-- runs of a better class, its group's older runs of its class, and of every other group's runs of its
-- class as many as fair shares let start meanwhile (by group weight). The part of its own class is
-- shown never higher than it was shown before: it rises only when a better class is posted.
-- Answers its position, its own group's runs before it and its group's runs in flight (for the estimate).
CREATE OR REPLACE FUNCTION otp_queue_standing(p_run text)
RETURNS TABLE (run_position int, own_ahead int, group_in_flight int) LANGUAGE plpgsql AS $$
DECLARE
  r otp_runs%ROWTYPE;
  own int;
  newer int;
  better int := 0;
  same int := 0;
  n int;
  mine otp_queue_groups%ROWTYPE;
  g record;
BEGIN
  SELECT * INTO r FROM otp_runs WHERE id = p_run;
  IF NOT FOUND OR r.status <> 'queued' THEN RETURN; END IF;
  IF r.requested_session_id IS NOT NULL THEN
    SELECT count(*) INTO own FROM otp_runs q WHERE q.project_id = r.project_id AND q.status = 'queued'
       AND q.requested_session_id = r.requested_session_id AND q.id < r.id;
    run_position := own; own_ahead := own; group_in_flight := 0;
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT * INTO mine FROM otp_queue_groups x
   WHERE x.project_id = r.project_id AND x.owner = r.queue_owner AND x.grp = r.queue_group;
  -- Its group's runs of its class before it: the class's count less the newer ones, when those are
  -- few (a run just posted has none), else counted.
  SELECT count(*) INTO newer FROM (SELECT 1 FROM otp_runs q WHERE q.project_id = r.project_id
     AND q.queue_owner = r.queue_owner AND q.queue_group = r.queue_group AND q.queue_rank = r.queue_rank
     AND q.status = 'queued' AND q.requested_session_id IS NULL AND q.id > r.id LIMIT 1000) x;
  IF newer < 1000 THEN
    own := (ARRAY[mine.queued_gate, mine.queued_normal, mine.queued_batch])[r.queue_rank + 1] - 1 - newer;
  ELSE
    SELECT count(*) INTO own FROM otp_runs q WHERE q.project_id = r.project_id AND q.queue_owner = r.queue_owner
       AND q.queue_group = r.queue_group AND q.queue_rank = r.queue_rank AND q.status = 'queued'
       AND q.requested_session_id IS NULL AND q.id < r.id;
  END IF;
  own := greatest(own, 0);
  FOR g IN SELECT x.owner, x.grp, x.weight, ARRAY[x.queued_gate, x.queued_normal, x.queued_batch] AS per_class
             FROM otp_queue_groups x WHERE x.project_id = r.project_id AND x.queued > 0 LOOP
    FOR k IN 1 .. r.queue_rank LOOP better := better + g.per_class[k]; END LOOP;
    IF g.owner <> r.queue_owner OR g.grp <> r.queue_group THEN
      same := same + least(g.per_class[r.queue_rank + 1], ceil((own + 1) * g.weight / coalesce(mine.weight, 1))::int);
    END IF;
  END LOOP;
  UPDATE otp_runs SET queue_shown_ahead = least(coalesce(queue_shown_ahead, own + same), own + same)
   WHERE id = p_run RETURNING queue_shown_ahead INTO n;
  run_position := better + n; own_ahead := own; group_in_flight := coalesce(mine.in_flight, 0);
  RETURN NEXT;
END $$;`;

// Runs running or queued when this migration runs: counted in the new accounts (owner '', group '').
const BACKFILL = `
INSERT INTO otp_queue_owners (project_id, owner, in_flight, start_sum, queued)
SELECT project_id, '', count(*) FILTER (WHERE status = 'running'),
       coalesce(sum(otp_queue_ms(started_at)) FILTER (WHERE status = 'running'), 0),
       count(*) FILTER (WHERE status = 'queued' AND requested_session_id IS NULL)
  FROM otp_runs WHERE status IN ('queued', 'running') GROUP BY project_id
ON CONFLICT DO NOTHING;
INSERT INTO otp_queue_groups (project_id, owner, grp, in_flight, start_sum, queued, queued_normal)
SELECT project_id, '', '', in_flight, start_sum, queued, queued FROM otp_queue_owners WHERE owner = ''
ON CONFLICT DO NOTHING;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(TABLES);
  await knex.raw(HELPERS);
  await knex.raw(TRIGGERS);
  await knex.raw(CLAIM);
  await knex.raw(POSITION);
  await knex.raw(BACKFILL);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
DROP TRIGGER IF EXISTS otp_queue_inserted ON otp_runs;
DROP TRIGGER IF EXISTS otp_queue_changed ON otp_runs;
DROP FUNCTION IF EXISTS otp_queue_claim(text, text, text, int, timestamptz, jsonb);
DROP FUNCTION IF EXISTS otp_queue_standing(text);
DROP FUNCTION IF EXISTS otp_queue_inserted();
DROP FUNCTION IF EXISTS otp_queue_changed();
DROP FUNCTION IF EXISTS otp_queue_activate(text, text, text, bigint, double precision, double precision, int);
DROP FUNCTION IF EXISTS otp_queue_vt(double precision, int, bigint, double precision, bigint);
DROP FUNCTION IF EXISTS otp_queue_ms(timestamptz);
DROP TABLE IF EXISTS otp_queue_groups;
DROP TABLE IF EXISTS otp_queue_owners;
DROP TABLE IF EXISTS otp_queue_pools;
DROP INDEX IF EXISTS otp_runs_queue_heads;
DROP INDEX IF EXISTS otp_runs_queue_pinned;
ALTER TABLE otp_runs DROP COLUMN IF EXISTS queue_owner, DROP COLUMN IF EXISTS queue_group, DROP COLUMN IF EXISTS queue_rank,
  DROP COLUMN IF EXISTS queue_as_gate, DROP COLUMN IF EXISTS queue_owner_weight, DROP COLUMN IF EXISTS queue_weight,
  DROP COLUMN IF EXISTS queue_max_in_flight, DROP COLUMN IF EXISTS superseded_by, DROP COLUMN IF EXISTS queue_shown_ahead;`);
}
