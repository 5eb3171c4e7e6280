// Every process keeps in memory which projects have an active webhook subscription
// (src/webhook-delivery/subscribed-projects.ts), so that a change of a project without one is written
// without the outbox. Any write of a subscription, whatever route or hand makes it, tells every process
// at commit, through the service's notice channel.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION webhook_subscription_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('otp_events', json_build_object('kind', 'webhook-subscriptions',
                                                        'projectId', CASE WHEN TG_OP = 'DELETE' THEN OLD.project_id ELSE NEW.project_id END)::text);
      RETURN NULL;
    END $$`);
  // Only rows of kind webhook run the function: other artifacts pay for the WHEN test alone.
  await knex.raw(`
    CREATE TRIGGER artifacts_webhook_written AFTER INSERT OR UPDATE ON artifacts
      FOR EACH ROW WHEN (NEW.kind = 'webhook') EXECUTE FUNCTION webhook_subscription_changed()`);
  await knex.raw(`
    CREATE TRIGGER artifacts_webhook_deleted AFTER DELETE ON artifacts
      FOR EACH ROW WHEN (OLD.kind = 'webhook') EXECUTE FUNCTION webhook_subscription_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_webhook_deleted ON artifacts');
  await knex.raw('DROP TRIGGER IF EXISTS artifacts_webhook_written ON artifacts');
  await knex.raw('DROP FUNCTION IF EXISTS webhook_subscription_changed()');
}
