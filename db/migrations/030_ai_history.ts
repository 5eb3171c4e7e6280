// The ai/* group's own state (docs/ai.md): the monthly AI-call allowance used per tenant, quarantined
// test cases, and locator-healing proposals with their decisions. Also two columns of step results
// it reads: `attempt` (the lead's retries add it in 050 too; whichever runs first adds it) and
// `tried_locators` (the candidates a passed step tried before the one it used, with their counts).
import type { Knex } from 'knex';

const ms = { useTz: true, precision: 3 } as const;

export async function up(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('otp_run_steps', 'attempt'))) {
    await knex.raw('ALTER TABLE otp_run_steps ADD COLUMN attempt smallint NOT NULL DEFAULT 1');
  }
  // Nullable and without a default: adding it rewrites no row, and only a healed step writes it.
  await knex.raw('ALTER TABLE otp_run_steps ADD COLUMN IF NOT EXISTS tried_locators jsonb');

  // One row per tenant and month: the calls charged, raised by a conditional upsert so that every
  // process shares the count and a call past the allowance writes nothing.
  await knex.schema.createTable('ai_usage', (t) => {
    t.text('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.date('period_start').notNullable();
    t.integer('used').notNullable().defaultTo(0);
    t.jsonb('by_operation').notNullable().defaultTo('{}');
    t.timestamp('updated_at', ms).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'period_start']);
  });

  // The quarantine of a test case, live while expires_at is ahead; undone rows are deleted.
  await knex.schema.createTable('ai_quarantines', (t) => {
    t.text('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('test_case_id').notNullable();
    t.text('reason');
    t.text('created_by').notNullable();
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('renewed_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', ms).notNullable();
    t.primary(['project_id', 'test_case_id']);
  });

  // A proposed locator fix: one per (case, step, old, new) evidence key; a rejected key stays so
  // the same evidence is not proposed again.
  await knex.schema.createTable('ai_healing_proposals', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('test_case_id').notNullable();
    t.integer('case_version');
    t.integer('step_position').notNullable();
    t.jsonb('old_locator').notNullable();
    t.jsonb('new_locator').notNullable();
    t.text('evidence_key').notNullable();
    t.jsonb('evidence').notNullable();
    t.text('status').notNullable().defaultTo('proposed');
    t.text('decided_by');
    t.timestamp('decided_at', ms);
    t.integer('new_version');
    t.text('reason');
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', ms).notNullable().defaultTo(knex.fn.now());
    t.unique(['project_id', 'evidence_key']);
    t.index(['project_id', 'status', 'id']);
  });
  await knex.raw(
    `ALTER TABLE ai_healing_proposals ADD CONSTRAINT ai_healing_status CHECK (status IN ('proposed', 'accepted', 'rejected'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ai_healing_proposals');
  await knex.schema.dropTableIfExists('ai_quarantines');
  await knex.schema.dropTableIfExists('ai_usage');
  await knex.raw('ALTER TABLE otp_run_steps DROP COLUMN IF EXISTS tried_locators');
}
