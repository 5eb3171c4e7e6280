// Finished runs are served from a per-process cache (src/otp/store/run-view-cache.ts). The only thing that
// changes a finished run's view is its evidence files (assets rows with run_id), whatever route or
// hand changes them: every change tells every process, through the service's notice channel.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION otp_run_evidence_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' AND OLD.run_id IS NOT NULL THEN
        PERFORM pg_notify('otp_events', json_build_object('kind', 'run-view', 'runId', OLD.run_id)::text);
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.run_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.run_id IS DISTINCT FROM OLD.run_id) THEN
        PERFORM pg_notify('otp_events', json_build_object('kind', 'run-view', 'runId', NEW.run_id)::text);
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER assets_run_evidence_changed AFTER INSERT OR UPDATE OR DELETE ON assets
      FOR EACH ROW EXECUTE FUNCTION otp_run_evidence_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS assets_run_evidence_changed ON assets');
  await knex.raw('DROP FUNCTION IF EXISTS otp_run_evidence_changed()');
}
