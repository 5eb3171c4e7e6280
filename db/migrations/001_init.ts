import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('tier').notNullable().defaultTo('free');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('projects', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('active');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable().references('tenants.id');
    t.text('project_id').notNullable().references('projects.id');
    t.text('name').notNullable();
    t.text('scope').notNullable();
    // Only a SHA-256 of the secret is kept; the prefix lets people tell their keys apart.
    t.text('key_hash').notNullable().unique();
    t.text('key_prefix').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['project_id', 'id']);
  });

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

  await knex.schema.createTable('service_instances', (t) => {
    t.text('id').primary();
    t.text('hostname').notNullable();
    t.integer('pid').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('heartbeat_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('otp_sessions', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    t.text('key_id').notNullable();
    t.text('instance_id').notNullable();
    t.text('executor').notNullable();
    t.text('name');
    t.text('version');
    t.jsonb('capabilities').notNullable();
    t.integer('max_parallel').notNullable();
    t.text('status').notNullable().defaultTo('open');
    t.timestamp('connected_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true });
    t.integer('close_code');
    t.text('close_reason');
    t.index(['project_id', 'status']);
  });

  await knex.schema.createTable('otp_runs', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    // The session the caller asked for (null: any ready session of the project).
    t.text('requested_session_id');
    // The session that holds the run once it is claimed.
    t.text('session_id');
    t.text('instance_id');
    t.text('status').notNullable();
    t.jsonb('vars').notNullable().defaultTo('{}');
    t.jsonb('allowed_origins').notNullable().defaultTo('[]');
    t.jsonb('test_cases').notNullable();
    t.text('plan_id');
    t.text('test_run_id');
    t.boolean('finish_test_run').notNullable().defaultTo(false);
    t.integer('total_steps').notNullable();
    t.integer('passed').notNullable().defaultTo(0);
    t.integer('failed').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.text('reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.integer('duration_ms');
    t.timestamp('cancel_requested_at', { useTz: true });
    t.index(['project_id', 'id']);
    t.index(['session_id', 'status']);
  });
  // The dispatcher's queue scan: queued runs of a project, oldest first.
  await knex.raw(`CREATE INDEX otp_runs_queue ON otp_runs (project_id, id) WHERE status = 'queued'`);

  await knex.schema.createTable('otp_run_steps', (t) => {
    t.text('run_id').notNullable().references('otp_runs.id').onDelete('CASCADE');
    t.integer('step_index').notNullable();
    t.integer('case_index').notNullable();
    t.text('test_case_id').notNullable();
    t.text('label');
    t.jsonb('action').notNullable();
    t.integer('timeout_ms').notNullable();
    t.boolean('continue_on_fail').notNullable();
    t.text('evidence_policy');
    t.text('status').notNullable().defaultTo('pending');
    t.text('source');
    t.integer('duration_ms');
    t.jsonb('error');
    t.jsonb('evidence');
    t.text('actual');
    t.jsonb('used_locator');
    t.timestamp('finished_at', { useTz: true });
    t.primary(['run_id', 'step_index']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'otp_run_steps',
    'otp_runs',
    'otp_sessions',
    'service_instances',
    'test_plans',
    'test_cases',
    'api_keys',
    'projects',
    'tenants',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
