// Artifacts (every project-scoped resource group but API keys and OTP runs) live in one table: common
// columns for what every record has (id, kind, owner, revision, times) and one jsonb `data` validated
// by the resource's JSON Schema. Filters are containment queries on `data` served by one GIN index;
// links get real foreign keys (both ends cascade); the quota is one counter per project kept exact by
// a trigger. See docs/resources.md for why.
import type { Knex } from 'knex';

const ms = { useTz: true, precision: 3 } as const;

export async function up(knex: Knex): Promise<void> {
  // ---- platform: groups of projects, project lifecycle, key revisions -----------------------------
  await knex.schema.createTable('project_groups', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('name').notNullable();
    t.text('description');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', ms).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'name']);
  });
  await knex.schema.alterTable('projects', (t) => {
    t.text('description');
    t.text('group_id').references('project_groups.id').onDelete('SET NULL');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('archived_at', { useTz: true });
    t.timestamp('deleted_at', { useTz: true });
    t.index(['tenant_id', 'id']);
  });
  // Millisecond precision, as for artifacts: the updatedAt sort keys its cursor on the value answered.
  await knex.raw(
    'ALTER TABLE projects ALTER COLUMN created_at TYPE timestamptz(3), ALTER COLUMN updated_at TYPE timestamptz(3)',
  );
  await knex.schema.alterTable('api_keys', (t) => {
    t.integer('version').notNullable().defaultTo(1);
  });

  // ---- artifacts --------------------------------------------------------------------------------
  await knex.schema.createTable('artifacts', (t) => {
    t.text('id').primary();
    t.text('kind').notNullable();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    t.integer('version').notNullable().defaultTo(1);
    t.jsonb('data').notNullable();
    t.text('created_by');
    // Millisecond precision: the updatedAt sort keys its cursor on the value a client sees.
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', ms).notNullable().defaultTo(knex.fn.now());
    t.index(['project_id', 'kind', 'id']);
    t.index(['project_id', 'kind', 'updated_at', 'id']);
  });
  await knex.raw('CREATE INDEX artifacts_data ON artifacts USING gin (data jsonb_path_ops)');
  // History of a test case, and the latest result per case (coverage, test run summaries).
  await knex.raw(
    `CREATE INDEX artifacts_results_by_case ON artifacts (project_id, (data->>'testCaseId'), created_at, id) WHERE kind = 'test_result'`,
  );
  await knex.raw(
    `CREATE INDEX artifacts_results_by_run ON artifacts ((data->>'testRunId')) WHERE kind = 'test_result'`,
  );
  // An OTP run records each test case once, however often its hook runs.
  await knex.raw(
    `CREATE UNIQUE INDEX artifacts_results_per_otp_run ON artifacts ((data->>'otpRunId'), (data->>'testCaseId')) WHERE kind = 'test_result'`,
  );
  // A release's version name is unique in its project.
  await knex.raw(
    `CREATE UNIQUE INDEX artifacts_release_name ON artifacts (project_id, (data->>'name')) WHERE kind = 'release'`,
  );

  await knex.schema.createTable('artifact_links', (t) => {
    t.text('id').primary();
    t.text('project_id').notNullable().references('projects.id');
    t.text('from_id').notNullable().references('artifacts.id').onDelete('CASCADE');
    t.text('to_id').notNullable().references('artifacts.id').onDelete('CASCADE');
    t.text('relation').notNullable();
    t.text('created_by');
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.unique(['from_id', 'to_id', 'relation']);
    t.index(['to_id']);
  });

  // ---- quota: artifacts per project, exact whoever writes ----------------------------------------
  await knex.schema.createTable('project_usage', (t) => {
    t.text('project_id').primary().references('projects.id');
    t.integer('artifacts').notNullable().defaultTo(0);
  });
  await knex.raw(`
    CREATE FUNCTION artifacts_count() RETURNS trigger AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO project_usage (project_id, artifacts) VALUES (NEW.project_id, 1)
          ON CONFLICT (project_id) DO UPDATE SET artifacts = project_usage.artifacts + 1;
        RETURN NEW;
      END IF;
      UPDATE project_usage SET artifacts = artifacts - 1 WHERE project_id = OLD.project_id;
      RETURN OLD;
    END $$ LANGUAGE plpgsql`);
  await knex.raw(
    'CREATE TRIGGER artifacts_count AFTER INSERT OR DELETE ON artifacts FOR EACH ROW EXECUTE FUNCTION artifacts_count()',
  );

  // ---- REST conventions kept in PostgreSQL so that every process sees them ------------------------
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('key_id').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('idempotency_key').notNullable();
    t.text('request_hash').notNullable();
    // Null while the first request is in flight.
    t.integer('status');
    t.jsonb('body');
    t.jsonb('headers');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['key_id', 'method', 'path', 'idempotency_key']);
    t.index(['created_at']);
  });
  await knex.schema.createTable('rate_limit_windows', (t) => {
    t.text('key_id').primary();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.integer('count').notNullable();
  });

  // ---- test results of OTP runs: which finished runs still owe their results ---------------------
  await knex.schema.alterTable('otp_runs', (t) => {
    t.timestamp('results_recorded_at', { useTz: true });
  });
  await knex.raw(
    `CREATE INDEX otp_runs_results_owed ON otp_runs (finished_at) WHERE test_run_id IS NOT NULL AND results_recorded_at IS NULL`,
  );

  // ---- test cases and plans move into artifacts ---------------------------------------------------
  await knex.raw(`
    INSERT INTO artifacts (id, kind, tenant_id, project_id, version, data, created_at, updated_at)
    SELECT id, 'test_case', tenant_id, project_id, version,
           jsonb_strip_nulls(jsonb_build_object('title', title, 'description', description, 'steps', steps,
                                                'status', 'ready', 'priority', 'medium', 'labels', '[]'::jsonb)),
           created_at, updated_at
      FROM test_cases`);
  await knex.raw(`
    INSERT INTO artifacts (id, kind, tenant_id, project_id, version, data, created_at, updated_at)
    SELECT id, 'test_plan', tenant_id, project_id, version,
           jsonb_strip_nulls(jsonb_build_object('title', title, 'description', description, 'testCaseIds', test_case_ids,
                                                'status', 'active', 'labels', '[]'::jsonb)),
           created_at, updated_at
      FROM test_plans`);
  await knex.schema.dropTable('test_plans');
  await knex.schema.dropTable('test_cases');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.createTable('test_cases', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    t.text('title').notNullable();
    t.text('description');
    t.jsonb('steps').notNullable().defaultTo('[]');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['project_id', 'id']);
  });
  await knex.schema.createTable('test_plans', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    t.text('title').notNullable();
    t.text('description');
    t.jsonb('test_case_ids').notNullable().defaultTo('[]');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['project_id', 'id']);
  });
  await knex.raw(`
    INSERT INTO test_cases (id, tenant_id, project_id, title, description, steps, version, created_at, updated_at)
    SELECT id, tenant_id, project_id, data->>'title', data->>'description', data->'steps', version, created_at, updated_at
      FROM artifacts WHERE kind = 'test_case'`);
  await knex.raw(`
    INSERT INTO test_plans (id, tenant_id, project_id, title, description, test_case_ids, version, created_at, updated_at)
    SELECT id, tenant_id, project_id, data->>'title', data->>'description', data->'testCaseIds', version, created_at, updated_at
      FROM artifacts WHERE kind = 'test_plan'`);
  await knex.raw('DROP INDEX IF EXISTS otp_runs_results_owed');
  await knex.schema.alterTable('otp_runs', (t) => t.dropColumn('results_recorded_at'));
  await knex.schema.dropTable('rate_limit_windows');
  await knex.schema.dropTable('idempotency_keys');
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_count ON artifacts');
  await knex.raw('DROP FUNCTION IF EXISTS artifacts_count()');
  await knex.schema.dropTable('project_usage');
  await knex.schema.dropTable('artifact_links');
  await knex.schema.dropTable('artifacts');
  await knex.schema.alterTable('api_keys', (t) => t.dropColumn('version'));
  await knex.schema.alterTable('projects', (t) => {
    t.dropIndex(['tenant_id', 'id']);
    for (const column of ['description', 'group_id', 'version', 'archived_at', 'deleted_at']) t.dropColumn(column);
  });
  await knex.schema.dropTable('project_groups');
}
