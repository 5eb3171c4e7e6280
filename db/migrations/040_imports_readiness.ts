// Issue 29: results imported from other tools and release readiness.
// - test_case_mappings: the test case an imported test (its external identity: the tool's suite,
//   class or file and name) was matched to, per project, so the next import of the same test finds it.
// - readiness_snapshots: a release's readiness as last computed when it changed (the verdict, each
//   rule, the failing cases), so "new failures" compares with the previous one and a verdict change
//   is seen once (a webhook).
// - project_settings: settings of a project kept by the platform (readiness thresholds first), one
//   row per project created on first write; a project without one has the defaults.
import type { Knex } from 'knex';

const ms = { useTz: true, precision: 3 } as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('test_case_mappings', (t) => {
    t.text('project_id').notNullable().references('projects.id');
    t.text('external_key').notNullable();
    t.text('test_case_id').notNullable().references('artifacts.id').onDelete('CASCADE');
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', ms).notNullable().defaultTo(knex.fn.now());
    t.primary(['project_id', 'external_key']);
    t.index(['test_case_id']);
  });
  await knex.schema.createTable('readiness_snapshots', (t) => {
    t.text('id').primary();
    t.text('project_id').notNullable().references('projects.id');
    t.text('release_id').notNullable().references('artifacts.id').onDelete('CASCADE');
    t.text('verdict').notNullable();
    t.jsonb('rules').notNullable();
    t.jsonb('failing_case_ids').notNullable();
    t.timestamp('computed_at', ms).notNullable().defaultTo(knex.fn.now());
    t.index(['release_id', 'computed_at']);
  });
  await knex.schema.createTable('project_settings', (t) => {
    t.text('project_id').primary().references('projects.id');
    t.jsonb('settings').notNullable().defaultTo('{}');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('updated_at', ms).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('project_settings');
  await knex.schema.dropTable('readiness_snapshots');
  await knex.schema.dropTable('test_case_mappings');
}
