// Which fields of a step's observed text (actual, error.message, evidence.consoleErrors) were stored
// with U+FFFD in place of what PostgreSQL cannot hold (src/otp/protocol/observed-text.ts): a JSON
// array of their names, NULL when nothing was replaced. Adding a nullable column rewrites no row.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE otp_run_steps ADD COLUMN text_replaced jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE otp_run_steps DROP COLUMN IF EXISTS text_replaced');
}
