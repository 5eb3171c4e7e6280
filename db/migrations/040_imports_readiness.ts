// Issue 29: results imported from other tools and release readiness.
// - test_case_mappings: the test case an imported test (its external identity: the tool's suite,
//   class or file and name) was matched to, per project, so the next import of the same test finds it.
// - readiness_snapshots: a release's readiness as last computed when it changed (the verdict, each
//   rule, the failing cases), so "new failures" compares with the previous one and a verdict change
//   is seen once (a webhook).
// - project_settings: settings of a project kept by the platform (readiness thresholds first), one
//   row per project created on first write; a project without one has the defaults.
// - The artifact counter of project_usage counts per statement, not per row: an import writes tens of
//   thousands of rows in one transaction, and a row trigger updated one usage row once per artifact,
//   each update walking the longer chain of that row's versions (50,000 tests took 87 s, 577 a second,
//   against 2,900 a second for 2,000). One update per statement, from its transition table.
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
  await countPerStatement(knex);
}

async function countPerStatement(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_count ON artifacts');
  await knex.raw(`
    CREATE FUNCTION artifacts_count_inserted() RETURNS trigger AS $$
    BEGIN
      INSERT INTO project_usage (project_id, artifacts)
        SELECT project_id, count(*) FROM inserted_artifacts GROUP BY project_id
        ON CONFLICT (project_id) DO UPDATE SET artifacts = project_usage.artifacts + EXCLUDED.artifacts;
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`
    CREATE FUNCTION artifacts_count_deleted() RETURNS trigger AS $$
    BEGIN
      UPDATE project_usage u SET artifacts = u.artifacts - d.n
        FROM (SELECT project_id, count(*) AS n FROM deleted_artifacts GROUP BY project_id) d
       WHERE u.project_id = d.project_id;
      RETURN NULL;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(`CREATE TRIGGER artifacts_count_inserted AFTER INSERT ON artifacts
    REFERENCING NEW TABLE AS inserted_artifacts FOR EACH STATEMENT EXECUTE FUNCTION artifacts_count_inserted()`);
  await knex.raw(`CREATE TRIGGER artifacts_count_deleted AFTER DELETE ON artifacts
    REFERENCING OLD TABLE AS deleted_artifacts FOR EACH STATEMENT EXECUTE FUNCTION artifacts_count_deleted()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_count_inserted ON artifacts');
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_count_deleted ON artifacts');
  await knex.raw('DROP FUNCTION IF EXISTS artifacts_count_inserted()');
  await knex.raw('DROP FUNCTION IF EXISTS artifacts_count_deleted()');
  await knex.raw(
    'CREATE TRIGGER artifacts_count AFTER INSERT OR DELETE ON artifacts FOR EACH ROW EXECUTE FUNCTION artifacts_count()',
  );
  await knex.schema.dropTable('project_settings');
  await knex.schema.dropTable('readiness_snapshots');
  await knex.schema.dropTable('test_case_mappings');
}
