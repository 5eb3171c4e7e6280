// Retries of test cases (POST /otp/runs `retries`): each step row carries the attempt its outcome
// belongs to, and the outcomes of earlier attempts are kept in otp_run_step_attempts, written in the
// transaction that sets the retried case's steps back to pending. A column with a constant default
// rewrites no row.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE otp_run_steps ADD COLUMN IF NOT EXISTS attempt smallint NOT NULL DEFAULT 1');
  await knex.raw(`
    CREATE TABLE otp_run_step_attempts (
      run_id text NOT NULL REFERENCES otp_runs(id) ON DELETE CASCADE,
      step_index int NOT NULL,
      attempt smallint NOT NULL,
      status text NOT NULL,
      source text,
      duration_ms int,
      error jsonb,
      evidence jsonb,
      actual text,
      used_locator jsonb,
      text_replaced jsonb,
      finished_at timestamptz,
      PRIMARY KEY (run_id, step_index, attempt)
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS otp_run_step_attempts');
  await knex.raw('ALTER TABLE otp_run_steps DROP COLUMN IF EXISTS attempt');
}
