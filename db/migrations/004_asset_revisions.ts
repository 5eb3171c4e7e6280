// Buckets and assets get a revision like every other record (docs/rest-conventions.md): reads answer
// it as ETag, PATCH and DELETE honour If-Match. Existing rows start at revision 1.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  for (const table of ['asset_buckets', 'assets']) {
    await knex.schema.alterTable(table, (t) => {
      t.integer('version').notNullable().defaultTo(1);
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['assets', 'asset_buckets']) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('version');
    });
  }
}
