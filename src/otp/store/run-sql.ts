// The hot statements of RunStore, as text: the group commit's step write (also sent alone by the
// benchmark's PostgreSQL baseline), new runs with their steps, a claim, and the finishes of runs.
//
// Written with PostgreSQL's numbered parameters, each used once and in order, so that the same text
// serves pg (as a named statement, prepared once on a connection of its own) and knex (`?`, inside
// a transaction or where the store has no connection of its own).
import { ACTIVE_RUN_STATUSES, type FinalRunStatus, type RunCounts, type StepOutcome } from '../../../machines/types.js';
import { rankOf } from '../queue/model.js';
import type { NewRun, StepWrite } from './run-rows.js';

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
export function preparedQuery(
  statement: HotStatement,
  values: unknown[],
): { name: string; text: string; values: unknown[] } {
  return { name: statement.name, text: statement.text, values };
}

// A step write as the group commit's jsonb batch carries it (exported for the benchmark's baseline).
export function stepRecord({ runId, outcome }: StepWrite) {
  const record: {
    run_id: string;
    step_index: number;
    status: string;
    source: string;
    duration_ms: number | null;
    error: unknown;
    evidence: unknown;
    actual: string | null;
    used_locator: unknown;
    text_replaced?: string[];
    tried_locators?: unknown[];
  } = {
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
  // Only on the rare step whose observed text was replaced (the column reads NULL without it). Asked
  // with `in`: reading the absent member of an outcome (a JSON-parsed report, spread) costs time on
  // every step, as does a member set to undefined on every record; `in` costs nothing measurable
  // (docs/decisions.md, "Figures behind code").
  if ('textReplaced' in outcome && outcome.textReplaced) record.text_replaced = outcome.textReplaced;
  // Only on a step that passed through another than its first candidate (asked with `in`, as above).
  if ('triedLocators' in outcome && outcome.triedLocators) record.tried_locators = outcome.triedLocators;
  return record;
}

// One statement for any number of steps: the batch travels as a single jsonb parameter. Only pending
// rows change, so a step is never recorded twice.
// The LIMIT is the batch's own length (no row is ever cut): without it the planner assumes the
// usual 100 rows for a set-returning function and, while the steps table is young or its statistics
// stale, hash-joins against a sequential scan of every step row, a cost that grows with the table.
// With the real count it looks each row up by the primary key.
export const recordStepsSql = (batch: string, count: string) => `
UPDATE otp_run_steps s
   SET status = v.status, source = v.source, duration_ms = v.duration_ms, error = v.error,
       evidence = v.evidence, actual = v.actual, used_locator = v.used_locator, text_replaced = v.text_replaced,
       tried_locators = v.tried_locators, finished_at = now()
  FROM (SELECT * FROM jsonb_to_recordset(${batch}::jsonb) AS r(run_id text, step_index int, status text, source text,
          duration_ms int, error jsonb, evidence jsonb, actual text, used_locator jsonb, text_replaced jsonb, tried_locators jsonb) LIMIT ${count}) v
 WHERE s.run_id = v.run_id AND s.step_index = v.step_index AND s.status = 'pending'`;

// The group commit's statement, prepared once on its own connection (see RunStore): it runs for
// nearly every step, and through knex and the shared pool it cost the service more than the rest
// of a step's write. Exported for the benchmark's PostgreSQL baseline, which sends it alone.
export const RECORD_STEPS = hot('otp_record_steps', recordStepsSql('$1', '$2'));

// The columns runSummary (run-views.ts) reads, and the tenant an event names: what a reported verdict
// needs, without the trace the statement has just written (up to 500 transitions to parse back).
const SUMMARY_COLUMNS = `r.id, r.tenant_id, r.project_id, r.status, r.session_id, r.requested_session_id, r.plan_id,
  r.test_run_id, r.finish_test_run, r.test_cases, r.allowed_origins, r.vars, r.total_steps, r.passed, r.failed, r.skipped,
  r.reason, r.cancel_requested_at, r.created_at, r.started_at, r.finished_at, r.duration_ms`;

/** A run's verdict with its last outcomes, as the driver writes it. */
export interface RunFinish {
  runId: string;
  projectId: string;
  status: FinalRunStatus;
  counts: RunCounts;
  reason?: string;
  outcomes: StepOutcome[];
  /** The run machine's last transitions (run-trace.ts), written with the verdict. */
  trace?: { transitions: unknown[]; dropped: number };
}

/** What the driver learns of a written verdict. */
export interface FinishAnswer {
  durationMs: number;
  /** The run has a test run waiting for its results. */
  owesResults: boolean;
}

export type FinishedRow = { id: string; duration_ms?: number; test_run_id?: string | null };

export function finishAnswer(row: Omit<FinishedRow, 'id'> | undefined): FinishAnswer {
  return { durationMs: row?.duration_ms ?? 0, owesResults: Boolean(row?.test_run_id) };
}

/** The parameters of FINISH_RUNS / FINISH_REPORTED_RUNS: every verdict, then every run's outcomes. */
export function finishValues(finishes: RunFinish[]): unknown[] {
  const outcomes = finishes.flatMap(({ runId, outcomes }) => outcomes.map((outcome) => stepRecord({ runId, outcome })));
  const verdicts = finishes.map(({ runId, status, counts, reason, trace }) => ({
    id: runId,
    status,
    passed: counts.passed,
    failed: counts.failed,
    skipped: counts.skipped,
    reason: reason ?? null,
    trace: trace?.transitions ?? null,
    trace_dropped: trace?.dropped ?? null,
  }));
  return [JSON.stringify(verdicts), verdicts.length, JSON.stringify(outcomes), outcomes.length];
}

const ACTIVE = ACTIVE_RUN_STATUSES.map((status) => `'${status}'`).join(', ');

// The one statement that ends runs, whichever way they end (run-finish.ts): their verdicts travel as
// one jsonb parameter ($1, $2 rows), the outcomes of all of them as another ($3, $4), so the finishes
// that arrive together share one statement. A run that has already ended is left as it is, and so
// are its steps: a finished run never changes. A trace given replaces the one flushed.
const finishRunsSql = (returning: string) => `
WITH verdict AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, status text, passed int, failed int, skipped int,
           reason text, trace jsonb, trace_dropped int) LIMIT $2
), run AS (
  UPDATE otp_runs r
     SET status = v.status, passed = v.passed, failed = v.failed, skipped = v.skipped, reason = v.reason,
         trace = coalesce(v.trace, r.trace), trace_dropped = coalesce(v.trace_dropped, r.trace_dropped),
         finished_at = now(), duration_ms = coalesce((extract(epoch from now() - r.started_at) * 1000)::int, 0)
    FROM verdict v
   WHERE r.id = v.id AND r.status IN (${ACTIVE})
  RETURNING ${returning}
), recorded AS (${recordStepsSql('$3', '$4')} AND s.run_id IN (SELECT id FROM run))
SELECT * FROM run`;
/** Answers what the drivers need: each run's duration and whether a test run waits for its results. */
export const FINISH_RUNS = hot('otp_finish_runs', finishRunsSql('r.id, r.duration_ms, r.test_run_id'));
/** Answers the runs as `run.finished` reports them to webhooks (in the transaction that records the events). */
export const FINISH_REPORTED_RUNS = hot('otp_finish_reported_runs', finishRunsSql(SUMMARY_COLUMNS));

// Queued runs for one session: those asked for it, or for no session in particular, oldest first,
// with their steps (one JSON array each) unless the claimer has them already (PlannedRuns).
// SKIP LOCKED lets several processes share one queue.
// Parameters: session id, instance id, project id, session id again, how many, the ids whose steps
// the claimer has.
export const CLAIM_RUNS = hot(
  'otp_claim_runs',
  `WITH claimed AS (
     UPDATE otp_runs r SET status = 'running', session_id = $1, instance_id = $2, started_at = now()
      WHERE r.id IN (SELECT id FROM otp_runs
                      WHERE status = 'queued' AND project_id = $3
                        AND (requested_session_id IS NULL OR requested_session_id = $4)
                      ORDER BY id LIMIT $5 FOR UPDATE SKIP LOCKED)
      RETURNING r.id, r.project_id, r.vars, r.allowed_origins, r.test_cases)
   SELECT c.*, CASE WHEN c.id = ANY($6::text[]) THEN NULL ELSE (SELECT json_agg(json_build_object('step_index', s.step_index, 'case_index', s.case_index, 'action', s.action,
                                                  'timeout_ms', s.timeout_ms, 'continue_on_fail', s.continue_on_fail,
                                                  'evidence_policy', s.evidence_policy, 'label', s.label) ORDER BY s.step_index)
                  FROM otp_run_steps s WHERE s.run_id = c.id) END AS steps
     FROM claimed c`,
);

// The same claim by the queue rule (docs/queues.md), for several sessions of one project at once:
// otp_queue_claim_for (migration 074) takes for each session in turn, one at a time, the run the rule
// chooses (or an older run pinned to the session); otp_queue_claim_rows_for answers the claimed runs
// with their sessions in that order, read after the claim in a snapshot of their own (a join in this
// statement would not see a run committed after it began: migration 071).
// Parameters: project id, the session ids, how many for each, instance id, the policy (jsonb), the
// ids whose steps the claimer has.
export const CLAIM_QUEUE = hot(
  'otp_claim_queue',
  `SELECT session_id, id, project_id, vars, allowed_origins, test_cases, ord, steps
     FROM otp_queue_claim_rows_for($1, $2::text[], $3::int[], $4, now(), $5::jsonb, $6::text[])`,
);

// New runs and their steps in one statement: the runs travel as one jsonb parameter ($1, $2 rows),
// each with its steps, so that the POSTs that arrive together share one statement (RunStore.insertRun).
// The steps' foreign key is checked at the end of the statement, when the run rows exist.
// A run given a session and an instance (start_session, start_instance) is inserted already claimed
// by them, so that it starts with no claim of its own (POST → run.start in one round trip), unless a
// queued run waits for that session: then it is queued behind it, and the queue's order holds. The
// runs of one batch do not look at each other: their POSTs were in flight together, so none of them
// was answered before another was sent, and any order between them is theirs.
export const INSERT_RUNS = hot(
  'otp_insert_runs',
  `
WITH p AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS v(id text, tenant_id text, project_id text, requested_session_id text, vars jsonb,
           allowed_origins jsonb, test_cases jsonb, plan_id text, test_run_id text, finish_test_run boolean, total_steps int,
           steps jsonb, start_session text, start_instance text, queue_owner text, queue_group text, queue_rank smallint,
           queue_owner_weight float8, queue_weight float8, queue_max_in_flight int) LIMIT $2
), s AS (
  SELECT p.*, p.start_session IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM otp_runs q
            WHERE q.status = 'queued' AND q.project_id = p.project_id
              AND (q.requested_session_id IS NULL OR q.requested_session_id = p.start_session))
         -- a group at its maxInFlight starts nothing more, however much room a session has
         AND (p.queue_max_in_flight IS NULL OR coalesce((SELECT g.in_flight FROM otp_queue_groups g
               WHERE g.project_id = p.project_id AND g.owner = p.queue_owner AND g.grp = p.queue_group), 0)
             + row_number() OVER (PARTITION BY p.project_id, p.queue_owner, p.queue_group ORDER BY p.id) <= p.queue_max_in_flight) AS start
    FROM p
), run AS (
  INSERT INTO otp_runs (id, tenant_id, project_id, requested_session_id, status, session_id, instance_id, started_at, vars,
                        allowed_origins, test_cases, plan_id, test_run_id, finish_test_run, total_steps, queue_owner,
                        queue_group, queue_rank, queue_owner_weight, queue_weight, queue_max_in_flight)
  SELECT id, tenant_id, project_id, requested_session_id, CASE WHEN start THEN 'running' ELSE 'queued' END,
         CASE WHEN start THEN start_session END, CASE WHEN start THEN start_instance END, CASE WHEN start THEN now() END,
         vars, allowed_origins, test_cases, plan_id, test_run_id, finish_test_run, total_steps, queue_owner,
         queue_group, queue_rank, queue_owner_weight, queue_weight, queue_max_in_flight
    FROM s
  RETURNING *
), steps AS (
  INSERT INTO otp_run_steps (run_id, step_index, case_index, test_case_id, label, action, timeout_ms, continue_on_fail, evidence_policy)
  SELECT run.id, v.step_index, v.case_index, v.test_case_id, v.label, v.action, v.timeout_ms, v.continue_on_fail, v.evidence_policy
    FROM run JOIN p ON p.id = run.id,
         jsonb_to_recordset(p.steps) AS v(step_index int, case_index int, test_case_id text, label text, action jsonb,
                                          timeout_ms int, continue_on_fail boolean, evidence_policy text)
)
SELECT * FROM run`,
);

/** A run to insert, and the session and process it starts on when it may (see INSERT_RUNS). */
export interface RunInsert {
  run: NewRun;
  startOn?: { sessionId: string; instanceId: string };
}

/** INSERT_RUNS' parameters for a batch of runs. */
export function insertValues(inserts: RunInsert[]): unknown[] {
  const runs = inserts.map(({ run, startOn }) => ({
    id: run.id,
    tenant_id: run.tenantId,
    project_id: run.projectId,
    requested_session_id: run.requestedSessionId,
    vars: run.vars,
    allowed_origins: run.allowedOrigins,
    test_cases: run.testCases,
    plan_id: run.planId,
    test_run_id: run.testRunId,
    finish_test_run: run.finishTestRun,
    total_steps: run.steps.length,
    steps: run.steps.map((s) => ({
      step_index: s.stepIndex,
      case_index: s.caseIndex,
      test_case_id: s.testCaseId,
      label: s.label ?? null,
      action: s.action,
      timeout_ms: s.timeoutMs,
      continue_on_fail: s.continueOnFail,
      evidence_policy: s.evidence ?? null,
    })),
    start_session: startOn?.sessionId ?? null,
    start_instance: startOn?.instanceId ?? null,
    ...queueColumns(run),
  }));
  return [JSON.stringify(runs), runs.length];
}

/** The run's place in the queue as INSERT_RUNS takes it; a run planned without one is its tenant's legacy group. */
function queueColumns(run: NewRun) {
  const queue = run.queue;
  return {
    queue_owner: queue?.owner ?? '',
    queue_group: queue?.group ?? '',
    queue_rank: queue ? rankOf(queue.priority) : 1,
    queue_owner_weight: queue?.ownerWeight ?? null,
    queue_weight: queue?.weight ?? null,
    queue_max_in_flight: queue?.maxInFlight ?? null,
  };
}

/**
 * New sessions' rows, a group commit's batch in one jsonb parameter: a connect storm's hellos, one
 * prepared statement per batch (built by knex, a batch of 30 rows was 300 bindings to compile and bind).
 */
export const INSERT_SESSIONS = hot(
  'otp_insert_sessions',
  `
INSERT INTO otp_sessions (id, tenant_id, project_id, key_id, instance_id, executor, name, version, capabilities, max_parallel)
SELECT id, tenant_id, project_id, key_id, instance_id, executor, name, version, capabilities, max_parallel
  FROM jsonb_to_recordset($1::jsonb) AS v(id text, tenant_id text, project_id text, key_id text, instance_id text,
       executor text, name text, version text, capabilities jsonb, max_parallel int)`,
);
