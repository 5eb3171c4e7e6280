// The hot statements of RunStore, as text: the group commit's step write (also sent alone by the
// benchmark's PostgreSQL baseline), a new run with its steps, a claim, and a run's finish.
//
// Written with PostgreSQL's numbered parameters, each used once and in order, so that the same text
// serves pg (as a named statement, prepared once on a connection of its own) and knex (`?`, inside
// a transaction or where the store has no connection of its own).
import type { StepWrite } from './run-store.js';

/** A statement as pg prepares it (name and text), and its text for knex. */
export interface HotStatement {
  name: string;
  text: string;
  knexText: string;
}

function hot(name: string, text: string): HotStatement {
  return { name, text, knexText: text.replace(/\$\d+/g, '?') };
}

/** The statement with its values, as pg.Client#query takes it (prepared under its name). */
export function preparedQuery(statement: HotStatement, values: unknown[]): { name: string; text: string; values: unknown[] } {
  return { name: statement.name, text: statement.text, values };
}

// A step write as the group commit's jsonb batch carries it (exported for the benchmark's baseline).
export function stepRecord({ runId, outcome }: StepWrite) {
  return {
    run_id: runId,
    step_index: outcome.stepIndex,
    status: outcome.status,
    source: outcome.source,
    duration_ms: outcome.durationMs ?? null,
    error: outcome.error ?? null,
    evidence: outcome.evidence ?? null,
    actual: outcome.actual ?? null,
    used_locator: outcome.usedLocator ?? null,
  };
}

// One statement for any number of steps: the batch travels as a single jsonb parameter. Only pending
// rows change, so a step is never recorded twice.
// The LIMIT is the batch's own length (no row is ever cut): without it the planner assumes the
// usual 100 rows for a set-returning function and, while the steps table is young or its statistics
// stale, hash-joins against a sequential scan of every step row, a cost that grows with the table
// (seen in the benchmark: 5-15 ms per group commit). With the real count it looks each row up by
// the primary key.
export const recordStepsSql = (batch: string, count: string) => `
UPDATE otp_run_steps s
   SET status = v.status, source = v.source, duration_ms = v.duration_ms, error = v.error,
       evidence = v.evidence, actual = v.actual, used_locator = v.used_locator, finished_at = now()
  FROM (SELECT * FROM jsonb_to_recordset(${batch}::jsonb) AS r(run_id text, step_index int, status text, source text,
          duration_ms int, error jsonb, evidence jsonb, actual text, used_locator jsonb) LIMIT ${count}) v
 WHERE s.run_id = v.run_id AND s.step_index = v.step_index AND s.status = 'pending'`;

// The group commit's statement, prepared once on its own connection (see RunStore): it runs for
// nearly every step, and through knex and the shared pool it cost the service more than the rest
// of a step's write. Exported for the benchmark's PostgreSQL baseline, which sends it alone.
export const RECORD_STEPS = hot('otp_record_steps', recordStepsSql('$1', '$2'));

// The columns runSummary (run-views.ts) reads, and the tenant an event names: what a reported verdict
// needs, without the trace the statement has just written (up to 500 transitions to parse back).
const SUMMARY_COLUMNS = `id, tenant_id, project_id, status, session_id, requested_session_id, plan_id, test_run_id,
  finish_test_run, test_cases, allowed_origins, vars, total_steps, passed, failed, skipped, reason, cancel_requested_at,
  created_at, started_at, finished_at, duration_ms`;

// A run's last outcomes and its verdict in one statement (a trace given replaces the one flushed).
const finishRunSql = (returning: string) => `
WITH recorded AS (${recordStepsSql('$1', '$2')} RETURNING 1)
UPDATE otp_runs
   SET status = $3, passed = $4, failed = $5, skipped = $6, reason = $7,
       trace = coalesce($8::jsonb, trace), trace_dropped = coalesce($9::int, trace_dropped),
       finished_at = now(), duration_ms = coalesce((extract(epoch from now() - started_at) * 1000)::int, 0)
 WHERE id = $10
RETURNING ${returning}`;
/** Answers what the driver needs: the duration and whether a test run waits for results. */
export const FINISH_RUN = hot('otp_finish_run', finishRunSql('duration_ms, test_run_id'));
/** Answers the run as `run.finished` reports it to webhooks (in the transaction that records the event). */
export const FINISH_REPORTED_RUN = hot('otp_finish_reported_run', finishRunSql(SUMMARY_COLUMNS));

// Queued runs for one session: those asked for it, or for no session in particular, oldest first,
// with their steps (one JSON array each). SKIP LOCKED lets several processes share one queue.
// Parameters: session id, instance id, project id, session id again, how many.
export const CLAIM_RUNS = hot(
  'otp_claim_runs',
  `WITH claimed AS (
     UPDATE otp_runs r SET status = 'running', session_id = $1, instance_id = $2, started_at = now()
      WHERE r.id IN (SELECT id FROM otp_runs
                      WHERE status = 'queued' AND project_id = $3
                        AND (requested_session_id IS NULL OR requested_session_id = $4)
                      ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r.project_id, r.vars, r.allowed_origins, r.test_cases)
   SELECT c.*, (SELECT json_agg(json_build_object('step_index', s.step_index, 'case_index', s.case_index, 'action', s.action,
                                                  'timeout_ms', s.timeout_ms, 'continue_on_fail', s.continue_on_fail,
                                                  'evidence_policy', s.evidence_policy, 'label', s.label) ORDER BY s.step_index)
                  FROM otp_run_steps s WHERE s.run_id = c.id) AS steps
     FROM claimed c`,
);

// A new run and its steps in one statement: the steps travel as one jsonb parameter. The steps'
// foreign key is checked at the end of the statement, when the run row exists.
export const INSERT_RUN = hot(
  'otp_insert_run',
  `
WITH run AS (
  INSERT INTO otp_runs (id, tenant_id, project_id, requested_session_id, status, vars, allowed_origins, test_cases,
                        plan_id, test_run_id, finish_test_run, total_steps)
  VALUES ($1, $2, $3, $4, 'queued', $5::jsonb, $6::jsonb, $7::jsonb, $8, $9, $10, $11)
  RETURNING *
), steps AS (
  INSERT INTO otp_run_steps (run_id, step_index, case_index, test_case_id, label, action, timeout_ms, continue_on_fail, evidence_policy)
  SELECT run.id, v.step_index, v.case_index, v.test_case_id, v.label, v.action, v.timeout_ms, v.continue_on_fail, v.evidence_policy
    FROM run, jsonb_to_recordset($12::jsonb) AS v(step_index int, case_index int, test_case_id text, label text, action jsonb,
                                                   timeout_ms int, continue_on_fail boolean, evidence_policy text)
)
SELECT * FROM run`,
);
