// A signed failure keeps its step's number within its test case (0-based, as ai_case_outcomes'
// failed_position), so that a cluster's example is named as every door names a step
// (machines/step-names.ts). Failures signed before it have none (the runs' steps are another room's).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ai_failures ADD COLUMN IF NOT EXISTS position int');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ai_failures DROP COLUMN IF EXISTS position');
}
