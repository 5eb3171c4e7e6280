// The hot statements of RunStore, as text: the group commit's step write (also sent alone by the
// benchmark's PostgreSQL baseline), a new run with its steps, and a run's finish.
import type { StepWrite } from './run-store.js';

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
export const RECORD_STEPS = { name: 'otp_record_steps', text: recordStepsSql('$1', '$2') };

// The columns runSummary (run-views.ts) reads, and the tenant an event names: what a reported verdict
// needs, without the trace the statement has just written (up to 500 transitions to parse back).
const SUMMARY_COLUMNS = `id, tenant_id, project_id, status, session_id, requested_session_id, plan_id, test_run_id,
  finish_test_run, test_cases, allowed_origins, vars, total_steps, passed, failed, skipped, reason, cancel_requested_at,
  created_at, started_at, finished_at, duration_ms`;

// A run's last outcomes and its verdict in one statement (a trace given replaces the one flushed).
const finishRunSql = (returning: string) => `
WITH recorded AS (${recordStepsSql('?', '?')} RETURNING 1)
UPDATE otp_runs
   SET status = ?, passed = ?, failed = ?, skipped = ?, reason = ?,
       trace = coalesce(?::jsonb, trace), trace_dropped = coalesce(?::int, trace_dropped),
       finished_at = now(), duration_ms = coalesce((extract(epoch from now() - started_at) * 1000)::int, 0)
 WHERE id = ?
RETURNING ${returning}`;
/** Answers what the driver needs: the duration and whether a test run waits for results. */
export const FINISH_RUN_SQL = finishRunSql('duration_ms, test_run_id');
/** Answers the run as `run.finished` reports it to webhooks. */
export const FINISH_REPORTED_RUN_SQL = finishRunSql(SUMMARY_COLUMNS);

// A new run and its steps in one statement: the steps travel as one jsonb parameter. The steps'
// foreign key is checked at the end of the statement, when the run row exists.
export const INSERT_RUN_SQL = `
WITH run AS (
  INSERT INTO otp_runs (id, tenant_id, project_id, requested_session_id, status, vars, allowed_origins, test_cases,
                        plan_id, test_run_id, finish_test_run, total_steps)
  VALUES (?, ?, ?, ?, 'queued', ?::jsonb, ?::jsonb, ?::jsonb, ?, ?, ?, ?)
  RETURNING *
), steps AS (
  INSERT INTO otp_run_steps (run_id, step_index, case_index, test_case_id, label, action, timeout_ms, continue_on_fail, evidence_policy)
  SELECT run.id, v.step_index, v.case_index, v.test_case_id, v.label, v.action, v.timeout_ms, v.continue_on_fail, v.evidence_policy
    FROM run, jsonb_to_recordset(?::jsonb) AS v(step_index int, case_index int, test_case_id text, label text, action jsonb,
                                                  timeout_ms int, continue_on_fail boolean, evidence_policy text)
)
SELECT * FROM run`;
