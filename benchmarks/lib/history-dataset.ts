// A project's run history built in PostgreSQL with set-based SQL (generate_series, INSERT ... SELECT):
// by default 100,000 finished runs of 5 test cases × 10 steps (5 million step results) over 90 days,
// about 8% of the cases failing at one step with one of a few dozen causes whose messages carry
// numbers and values that change from run to run (as real messages do), the rest of the failed case
// skipped. Deterministic: run r's cases, failures and causes follow from r alone. For any scenario
// that needs history (failure clusters, triage, flakiness): give it the service's database and a project.
import pg from 'pg';

export interface HistoryShape {
  runs: number;
  casesPerRun: number;
  stepsPerCase: number;
  /** Distinct test cases the runs draw from. */
  testCases: number;
  /** The runs spread evenly over this many days, ending now. */
  days: number;
  /** Share of (run, case) pairs that fail, in thousandths. */
  failurePerMille: number;
  /** Distinct causes of failure (code and message template). */
  causes: number;
}

export const FULL_HISTORY: HistoryShape = {
  runs: 100_000,
  casesPerRun: 5,
  stepsPerCase: 10,
  testCases: 500,
  days: 90,
  failurePerMille: 80,
  causes: 40,
};
export const SMOKE_HISTORY: HistoryShape = {
  runs: 2_000,
  casesPerRun: 5,
  stepsPerCase: 10,
  testCases: 50,
  days: 30,
  failurePerMille: 80,
  causes: 10,
};

export interface History {
  shape: HistoryShape;
  runs: number;
  steps: number;
  failedCases: number;
  buildMs: number;
  /** The test case ids the runs use: tc_hist<number>. */
  testCaseId(n: number): string;
}

const CASE = (n: string) => `'tc_hist' || lpad((${n})::text, 6, '0')`;

/**
 * Builds the history into the project's runs. Triggers are off in this session
 * (session_replication_role = replica: no notice per inserted run), so the service learns of these
 * runs as it would of runs from before it existed: by its backfill.
 */
export async function buildHistory(
  databaseUrl: string,
  target: { tenantId: string; projectId: string },
  shape: HistoryShape = FULL_HISTORY,
): Promise<History> {
  const began = Date.now();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    await client.query('SET synchronous_commit = off');
    await client.query('BEGIN');
    // One row per (run, case slot): its test case and the position of its failed step (-1: passed).
    const h = `((r::bigint * 2654435761 + k * 40503) % 1000)`;
    await client.query(
      `CREATE TEMP TABLE hist_cases ON COMMIT DROP AS
       SELECT r, k, (r * 7 + k * 131) % $1 AS case_no,
              CASE WHEN ${h} < $2 THEN (${h} * 7) % $3 ELSE -1 END AS fail_at,
              ((r * 7 + k * 131) % $1 * 3 + ${h} % 3) % $4 AS cause
         FROM generate_series(1, $5) AS r, generate_series(0, $6 - 1) AS k`,
      [shape.testCases, shape.failurePerMille, shape.stepsPerCase, shape.causes, shape.runs, shape.casesPerRun],
    );
    const span = `(now() - make_interval(days => $3) + (r * (($3 * 86400.0) / $4)) * interval '1 second')`;
    await client.query(
      `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, passed, failed, skipped, created_at, started_at, finished_at, duration_ms)
       SELECT 'otr_hist' || lpad(r::text, 9, '0'), $1, $2,
              CASE WHEN bool_or(fail_at >= 0) THEN 'failed' ELSE 'passed' END,
              jsonb_agg(jsonb_build_object('id', ${CASE('case_no')}, 'title', 'Case ' || case_no, 'steps', $5::int) ORDER BY k),
              count(*) * $5,
              sum(CASE WHEN fail_at < 0 THEN $5 ELSE fail_at END),
              count(*) FILTER (WHERE fail_at >= 0),
              sum(CASE WHEN fail_at < 0 THEN 0 ELSE $5 - fail_at - 1 END),
              ${span} - interval '40 seconds', ${span} - interval '40 seconds', ${span}, 40000
         FROM hist_cases GROUP BY r`,
      [target.tenantId, target.projectId, shape.days, shape.runs, shape.stepsPerCase],
    );
    const steps = await client.query(
      `INSERT INTO otp_run_steps (run_id, step_index, case_index, test_case_id, label, action, timeout_ms, continue_on_fail, status, source, duration_ms, error, finished_at)
       SELECT 'otr_hist' || lpad(c.r::text, 9, '0'), c.k * $1 + s, c.k, ${CASE('c.case_no')}, NULL,
              CASE WHEN s % 3 = 2
                   THEN jsonb_build_object('action', 'assert', 'kind', 'text', 'locator', jsonb_build_object('by', 'testid', 'value', 'out-' || c.case_no || '-' || s), 'op', 'equals', 'expected', 'Total: 42')
                   ELSE jsonb_build_object('action', 'click', 'locator', jsonb_build_object('by', 'testid', 'value', 'el-' || c.case_no || '-' || s)) END,
              5000, false,
              CASE WHEN c.fail_at < 0 OR s < c.fail_at THEN 'pass' WHEN s = c.fail_at THEN 'fail' ELSE 'skip' END,
              CASE WHEN c.fail_at >= 0 AND s > c.fail_at THEN 'service' ELSE 'executor' END,
              CASE WHEN c.fail_at >= 0 AND s > c.fail_at THEN 0 ELSE 40 + s END,
              CASE WHEN s = c.fail_at THEN
                CASE c.cause % 4
                  WHEN 0 THEN jsonb_build_object('code', 'E_ASSERT_FAILED', 'message', 'expected text to equal "Total: ' || (c.r % 97) || '", got "Total: ' || (c.r % 89) || '" [cause ' || c.cause || ']')
                  WHEN 1 THEN jsonb_build_object('code', 'E_LOCATOR_NOT_FOUND', 'message', 'no element matched testid "el-' || c.case_no || '-' || s || '" [cause ' || c.cause || ']',
                                                 'triedLocators', jsonb_build_array(jsonb_build_object('by', 'testid', 'value', 'el', 'count', 0), jsonb_build_object('by', 'text', 'value', 'Pay', 'count', 1)))
                  WHEN 2 THEN jsonb_build_object('code', 'E_TIMEOUT', 'message', 'page.goto: Timeout ' || (5000 + c.r % 7 * 1000) || 'ms exceeded at http://127.0.0.1:' || (30000 + c.r % 5000) || '/shop?session=' || c.r || ' [cause ' || c.cause || ']')
                  ELSE jsonb_build_object('code', 'E_INTERNAL', 'message', 'page.goto: net::ERR_CONNECTION_REFUSED at http://10.0.' || (c.r % 200) || '.7:8080/api/orders/' || c.r || ' [cause ' || c.cause || ']') END
                WHEN c.fail_at >= 0 AND s > c.fail_at THEN jsonb_build_object('code', 'E_SKIPPED', 'message', 'an earlier step of the same test case did not pass')
                ELSE NULL END,
              now()
         FROM hist_cases c, generate_series(0, $1 - 1) AS s`,
      [shape.stepsPerCase],
    );
    const failed = await client.query('SELECT count(*)::int AS n FROM hist_cases WHERE fail_at >= 0');
    await client.query('COMMIT');
    await client.query('ANALYZE otp_runs');
    await client.query('ANALYZE otp_run_steps');
    return {
      shape,
      runs: shape.runs,
      steps: steps.rowCount ?? 0,
      failedCases: failed.rows[0].n,
      buildMs: Date.now() - began,
      testCaseId: (n) => `tc_hist${String(n).padStart(6, '0')}`,
    };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    await client.end();
  }
}
