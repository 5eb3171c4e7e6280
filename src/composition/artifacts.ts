// The rooms that keep what a project holds: webhook delivery (the outbox every store reports its
// changes to), assets and evidence files, the artifacts and the projects' settings.
import { type Artifacts, createArtifacts } from '../artifacts/index.js';
import { type Assets, createAssets } from '../assets/index.js';
import type { Config } from '../config.js';
import { RunFacts } from '../otp/store/run-facts.js';
import { RunResultsStore } from '../otp/store/run-results-store.js';
import type { RunViewCache } from '../otp/store/run-view-cache.js';
import { ProjectSettings } from '../platform/routes.js';
import { tenancy } from '../platform/tenancy.js';
import { createWebhookDelivery, type WebhookDelivery } from '../webhook-delivery/index.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

/** Webhook delivery: the outbox every store reports its changes to, in the changes' transactions. */
export function webhookDelivery(config: Config, database: Database, instanceId: string, teardown: Teardown) {
  const { db, quietLog, notifier } = database;
  const webhooks: WebhookDelivery = createWebhookDelivery({ config: config.webhooks, db, log: quietLog, instanceId });
  teardown.add('webhook delivery', () => webhooks.stop());
  notifier.on('webhooks', () => webhooks.wake());
  notifier.on('webhook-subscriptions', (notice) => webhooks.subscriptionsChanged(notice.projectId));
  // Back after a lost connection: forget what a missed notice would have changed, and look for deliveries.
  notifier.onReconnected(() => {
    webhooks.forgetSubscriptions();
    webhooks.wake();
  });
  return webhooks;
}

export interface Holdings {
  assets: Assets;
  artifacts: Artifacts;
  projectSettings: ProjectSettings;
}

/**
 * Assets and artifacts. The ports between rooms: assets and the artifacts room read OTP runs through
 * the OTP store, and a run's evidence changing drops its cached view.
 */
export async function holdings(
  config: Config,
  database: Database,
  parts: { runViews: RunViewCache; webhooks: WebhookDelivery },
  teardown: Teardown,
): Promise<Holdings> {
  const { db, quietLog: log } = database;
  const { runViews, webhooks } = parts;
  const evidenceChanged = (runId: string) => runViews.invalidate(runId);
  const assets = await createAssets({ config, db, log, evidenceChanged, runs: new RunFacts(db), tenants: tenancy });
  teardown.add('assets and evidence', () => assets.stop());
  const projectSettings = new ProjectSettings(db);
  const artifacts = await createArtifacts({
    config,
    db,
    log,
    runResults: new RunResultsStore(db),
    events: webhooks.events,
    // Readiness is judged with the project's thresholds, kept by the platform room.
    readinessThresholds: projectSettings,
  });
  teardown.add('artifact stores', () => artifacts.stop());
  return { assets, artifacts, projectSettings };
}
