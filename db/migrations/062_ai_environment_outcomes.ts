// A case outcome the environment caused (its failure came from an error page, an unreachable page or
// a navigation without an answer, as the scan judged it from the step's evidence) says nothing of the
// case: triage leaves it out of the case's history. Outcomes written before it are judged by their
// message alone, as before.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ai_case_outcomes ADD COLUMN IF NOT EXISTS environment boolean NOT NULL DEFAULT false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ai_case_outcomes DROP COLUMN IF EXISTS environment');
}
