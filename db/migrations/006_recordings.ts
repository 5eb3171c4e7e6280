// Recordings (docs/recording.md): what an executor records on a session, one row per user action as
// it arrives, until record.stop turns the events into a test case (an artifact, written by its room).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('otp_recordings', (t) => {
    t.text('id').primary();
    t.text('tenant_id').notNullable();
    t.text('project_id').notNullable().references('projects.id');
    t.text('session_id').notNullable().references('otp_sessions.id');
    t.text('title').notNullable();
    t.text('start_url');
    // Who asked for it: the executor (a record.start frame) or a REST caller.
    t.text('started_by').notNullable();
    t.text('status').notNullable().defaultTo('recording');
    // The last event's seq: events are numbered 1, 2, ... in the order the session received them.
    t.integer('event_count').notNullable().defaultTo(0);
    t.text('test_case_id');
    t.text('stop_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('stopped_at', { useTz: true });
    t.index(['project_id', 'id']);
  });
  // At most one recording in progress per session: the one its event.recorded frames belong to.
  await knex.raw(
    `CREATE UNIQUE INDEX otp_recordings_one_active ON otp_recordings (session_id) WHERE status = 'recording'`,
  );

  await knex.schema.createTable('otp_recording_events', (t) => {
    t.text('recording_id').notNullable().references('otp_recordings.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    // A test case step ({ otp, label?, ... }), validated by the TestCaseStep schema on arrival.
    t.jsonb('step').notNullable();
    // When the user acted (from the executor), and when the service stored it.
    t.timestamp('at', { useTz: true });
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['recording_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('otp_recording_events');
  await knex.schema.dropTableIfExists('otp_recordings');
}
