// Failure signatures and clusters, triage corrections and rules (src/ai, docs/ai.md). Written after a
// run's verdict by the ai room's scan, never on the step path: one row per failed step (ai_failures),
// one per signature and project (ai_failure_signatures: first and last seen, count), one per test
// case of a finished run (ai_case_outcomes: the history triage reads), and the scan's watermark.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ai_failure_signatures (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      signature text NOT NULL,
      code text NOT NULL,
      action text NOT NULL,
      locator text NOT NULL,
      message text NOT NULL,
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      occurrences integer NOT NULL,
      PRIMARY KEY (project_id, signature)
    )`);
  await knex.raw(
    'CREATE INDEX ai_failure_signatures_recent ON ai_failure_signatures (project_id, last_seen DESC, signature)',
  );
  await knex.raw(`
    CREATE TABLE ai_failures (
      run_id text NOT NULL REFERENCES otp_runs(id) ON DELETE CASCADE,
      step_index integer NOT NULL,
      project_id text NOT NULL,
      signature text NOT NULL,
      case_index integer NOT NULL,
      test_case_id text NOT NULL,
      plan_id text,
      status text NOT NULL,
      message text NOT NULL,
      screenshot_asset_id text,
      occurred_at timestamptz NOT NULL,
      PRIMARY KEY (run_id, step_index)
    )`);
  await knex.raw('CREATE INDEX ai_failures_recent ON ai_failures (project_id, occurred_at DESC)');
  await knex.raw('CREATE INDEX ai_failures_signature ON ai_failures (project_id, signature, occurred_at DESC)');
  await knex.raw('CREATE INDEX ai_failures_case ON ai_failures (project_id, test_case_id, occurred_at DESC)');
  await knex.raw(`
    CREATE TABLE ai_case_outcomes (
      run_id text NOT NULL REFERENCES otp_runs(id) ON DELETE CASCADE,
      case_index integer NOT NULL,
      project_id text NOT NULL,
      test_case_id text NOT NULL,
      outcome text NOT NULL,
      failed_position integer,
      signature text,
      finished_at timestamptz NOT NULL,
      PRIMARY KEY (run_id, case_index)
    )`);
  await knex.raw(
    'CREATE INDEX ai_case_outcomes_history ON ai_case_outcomes (project_id, test_case_id, finished_at DESC)',
  );
  await knex.raw(`
    CREATE TABLE ai_scan_progress (
      name text PRIMARY KEY,
      finished_at timestamptz NOT NULL,
      run_id text NOT NULL
    )`);
  await knex.raw(`
    CREATE TABLE ai_signature_bugs (
      project_id text NOT NULL,
      signature text NOT NULL,
      bug_id text NOT NULL REFERENCES artifacts(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, signature, bug_id)
    )`);
  await knex.raw(`
    CREATE TABLE ai_triage_corrections (
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      signature text NOT NULL,
      category text NOT NULL,
      note text,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, signature)
    )`);
  await knex.raw(`
    CREATE TABLE ai_triage_rules (
      id text PRIMARY KEY,
      project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      field text NOT NULL,
      pattern text NOT NULL,
      category text NOT NULL,
      note text,
      created_by text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw('CREATE INDEX ai_triage_rules_project ON ai_triage_rules (project_id, id)');
  // The scan's backfill walks finished runs in (finished_at, id) order.
  await knex.raw('CREATE INDEX otp_runs_finished ON otp_runs (finished_at, id) WHERE finished_at IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS otp_runs_finished');
  for (const table of [
    'ai_triage_rules',
    'ai_triage_corrections',
    'ai_signature_bugs',
    'ai_scan_progress',
    'ai_case_outcomes',
    'ai_failures',
    'ai_failure_signatures',
  ]) {
    await knex.raw(`DROP TABLE IF EXISTS ${table}`);
  }
}
