// Webhook delivery (docs/webhooks.md): the outbox. A change that subscribers hear of writes, in its own
// transaction, one `webhook_events` row (the body as sent) and one `webhook_deliveries` row per
// subscription; any process claims due deliveries (SKIP LOCKED and a lease) and logs each attempt.
// Subscriptions themselves stay artifacts of kind `webhook`; their rows cascade to their deliveries.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

const ms = { useTz: true, precision: 3 } as const;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_events', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('type').notNullable();
    // The body every delivery of the event sends, byte for byte the same on each attempt.
    t.text('body').notNullable();
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('event_id').notNullable().references('webhook_events.id').onDelete('CASCADE');
    t.text('webhook_id').notNullable().references('artifacts.id').onDelete('CASCADE');
    t.text('project_id').notNullable();
    // pending (an attempt is due or in flight), succeeded, failed (gave up, or the webhook was disabled).
    t.text('status').notNullable().defaultTo('pending');
    // Attempts ever made, and attempts since the last (re)delivery began (the retry schedule's index).
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('tries').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', ms).notNullable().defaultTo(knex.fn.now());
    // The process sending it now, until when: a crashed process's lease runs out and another takes over.
    t.text('leased_by');
    t.timestamp('lease_until', ms);
    t.timestamp('last_attempt_at', ms);
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('succeeded_at', ms);
    t.timestamp('created_at', ms).notNullable().defaultTo(knex.fn.now());
    t.unique(['event_id', 'webhook_id']);
    t.index(['webhook_id', 'id']);
  });
  // The dispatchers' scan: pending deliveries by due time.
  await knex.raw(
    `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
  );
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id');
    t.text('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.timestamp('attempted_at', ms).notNullable().defaultTo(knex.fn.now());
    t.integer('duration_ms').notNullable();
    t.integer('status_code');
    t.text('error');
    t.text('response_excerpt');
    t.text('instance_id').notNullable();
    t.index(['delivery_id', 'id']);
  });
  // Consecutive failures of a webhook, across its deliveries: sustained failure disables it.
  await knex.schema.createTable('webhook_health', (t) => {
    t.text('webhook_id').primary().references('artifacts.id').onDelete('CASCADE');
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.timestamp('failing_since', ms);
    t.timestamp('last_success_at', ms);
  });

  // Subscriptions written before delivery existed: the run event is now `run.finished`, and every
  // webhook is signed, so one without a secret gets one (shown by POST /webhooks/:id/rotate-secret).
  const hooks: Array<{ id: string; data: Record<string, unknown> }> = await knex('artifacts')
    .where('kind', 'webhook')
    .select('id', 'data');
  for (const hook of hooks) {
    const data = { ...hook.data };
    if (Array.isArray(data.events))
      data.events = [...new Set(data.events.map((e) => (e === 'otp_run.finished' ? 'run.finished' : e)))];
    if (typeof data.secret !== 'string') data.secret = `whsec_${randomBytes(32).toString('base64')}`;
    data.hasSecret = true;
    await knex('artifacts')
      .where('id', hook.id)
      .update({ data: JSON.stringify(data) });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_health');
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_events');
  await knex.raw(
    `UPDATE artifacts SET data = jsonb_set(data, '{events}', (SELECT coalesce(jsonb_agg(CASE WHEN e = 'run.finished' THEN 'otp_run.finished' ELSE e END), '[]')
                                                              FROM jsonb_array_elements_text(data->'events') e))
      WHERE kind = 'webhook' AND data->'events' ? 'run.finished'`,
  );
}
