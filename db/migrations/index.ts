// Migrations are listed here rather than discovered on disk, so they load the same under tsx,
// in tests and from any working directory.
import type { Knex } from 'knex';
import * as init from './001_init.js';
import * as assets from './002_assets.js';
import * as artifacts from './003_artifacts.js';
import * as assetRevisions from './004_asset_revisions.js';
import * as runViewNotices from './005_run_view_notices.js';
import * as recordings from './006_recordings.js';
import * as runTrace from './008_run_trace.js';
import * as oauth from './009_oauth.js';
import * as webhookOutbox from './010_webhook_outbox.js';
import * as webhookSubscriptionNotices from './011_webhook_subscription_notices.js';
import * as stepTextReplaced from './012_step_text_replaced.js';
import * as aiFailures from './020_ai_failures.js';
import * as aiHistory from './030_ai_history.js';
import * as importsReadiness from './040_imports_readiness.js';
import * as suspectLinks from './041_suspect_links.js';
import * as stepAttempts from './050_step_attempts.js';
import * as aiFailurePosition from './060_ai_failure_position.js';
import * as aiEnvironmentOutcomes from './062_ai_environment_outcomes.js';
import * as queue from './070_queue.js';
import * as queueClaimRows from './071_queue_claim_rows.js';
import * as recentDurations from './072_recent_durations.js';
import * as claimWaits from './073_queue_claim_waits.js';
import * as claimForSessions from './074_queue_claim_for_sessions.js';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const migrations: Array<[string, Migration]> = [
  ['001_init', init],
  ['002_assets', assets],
  ['003_artifacts', artifacts],
  ['004_asset_revisions', assetRevisions],
  ['005_run_view_notices', runViewNotices],
  ['006_recordings', recordings],
  ['008_run_trace', runTrace],
  ['009_oauth', oauth],
  ['010_webhook_outbox', webhookOutbox],
  ['011_webhook_subscription_notices', webhookSubscriptionNotices],
  ['012_step_text_replaced', stepTextReplaced],
  ['020_ai_failures', aiFailures],
  ['030_ai_history', aiHistory],
  ['040_imports_readiness', importsReadiness],
  ['041_suspect_links', suspectLinks],
  ['050_step_attempts', stepAttempts],
  ['060_ai_failure_position', aiFailurePosition],
  ['062_ai_environment_outcomes', aiEnvironmentOutcomes],
  ['070_queue', queue],
  ['071_queue_claim_rows', queueClaimRows],
  ['072_recent_durations', recentDurations],
  ['073_queue_claim_waits', claimWaits],
  ['074_queue_claim_for_sessions', claimForSessions],
];

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
