// The run machine's transitions, kept with the run (src/otp/store/run-trace.ts), and the notices the
// console's live pages hear (src/console/live.ts): a run that is created, claimed, finished, asked to
// cancel or whose trace is flushed, and a session that opens or closes, is announced on the service's
// notice channel by the database itself, whichever process or statement changed it. Step results are
// not announced row by row (the hot path stays as it was): the process that drives a run tells its
// own pages at once, and other processes hear of it with the next trace flush (OTP_TRACE_FLUSH_MS).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // The last transitions of the run machine (at most 500): [{ at, event, from, to }], oldest first.
  await knex.raw(`ALTER TABLE otp_runs ADD COLUMN trace jsonb, ADD COLUMN trace_dropped integer NOT NULL DEFAULT 0`);
  await knex.raw(`
    CREATE FUNCTION otp_run_live() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('otp_events', json_build_object('kind', 'run-live', 'runId', NEW.id, 'projectId', NEW.project_id,
                                                        'status', NEW.status)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER otp_runs_live AFTER INSERT OR UPDATE OF status, trace, cancel_requested_at ON otp_runs
      FOR EACH ROW EXECUTE FUNCTION otp_run_live()`);
  await knex.raw(`
    CREATE FUNCTION otp_session_live() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('otp_events', json_build_object('kind', 'session-live', 'sessionId', NEW.id,
                                                        'projectId', NEW.project_id)::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER otp_sessions_live AFTER INSERT OR UPDATE OF status ON otp_sessions
      FOR EACH ROW EXECUTE FUNCTION otp_session_live()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS otp_sessions_live ON otp_sessions');
  await knex.raw('DROP FUNCTION IF EXISTS otp_session_live()');
  await knex.raw('DROP TRIGGER IF EXISTS otp_runs_live ON otp_runs');
  await knex.raw('DROP FUNCTION IF EXISTS otp_run_live()');
  await knex.raw('ALTER TABLE otp_runs DROP COLUMN IF EXISTS trace, DROP COLUMN IF EXISTS trace_dropped');
}
