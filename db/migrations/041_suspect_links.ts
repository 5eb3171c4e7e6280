// Suspect links (docs/releases.md): a `covers` link someone confirmed after the requirement changed is
// trusted again without a new run. Whether a link is suspect is computed on read from the
// requirement's contentChangedAt, the case's latest result and this mark; a nullable column rewrites no row.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE artifact_links ADD COLUMN confirmed_at timestamptz(3), ADD COLUMN confirmed_by text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE artifact_links DROP COLUMN IF EXISTS confirmed_at, DROP COLUMN IF EXISTS confirmed_by');
}
