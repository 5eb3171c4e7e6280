// Webhook delivery (docs/webhooks.md): the outbox that stores record changes into (the ChangeEvents
// port of src/db/change-events.ts), the dispatcher every process runs, and the delivery routes.
// Subscriptions are artifacts of kind `webhook`; this room reads and changes them only through the
// artifacts room's WebhookSubscriptions.

import { WebhookSubscriptions } from '../artifacts/index.js';
import type { WebhookConfig } from '../config.js';
import type { ChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { RouteDef } from '../rest/route.js';
import { DeliveryStore } from './delivery-store.js';
import { WebhookDispatcher } from './dispatcher.js';
import { Outbox } from './outbox.js';
import { webhookDeliveryRoutes } from './routes.js';
import { SubscribedProjects } from './subscribed-projects.js';

export { webhookEvents, webhookOperations } from './event-schemas.js';

export interface WebhookDelivery {
  /** Give to every store whose changes subscribers hear of. */
  events: ChangeEvents;
  routes: RouteDef[];
  /** Starts delivering from this process (unless the configuration says it does not deliver). */
  start(): void;
  /** Deliveries were written somewhere (the outbox's notice): look for due ones now. */
  wake(): void;
  /** A subscription of the project was written (the trigger's notice, db/migrations/011). */
  subscriptionsChanged(projectId: string): void;
  /** Notices may have been missed: whatever they would have changed is read again. */
  forgetSubscriptions(): void;
  stop(): Promise<void>;
}

export function createWebhookDelivery({
  config,
  db,
  log,
  instanceId,
}: {
  config: WebhookConfig;
  db: Db;
  log: Logger;
  instanceId: string;
}): WebhookDelivery {
  const subscriptions = new WebhookSubscriptions(db);
  const subscribedProjects = new SubscribedProjects(subscriptions);
  const store = new DeliveryStore(db);
  const dispatcher = new WebhookDispatcher({ db, store, subscriptions, config, instanceId, log });
  const wake = () => {
    if (config.deliver) dispatcher.wake();
  };
  return {
    events: new Outbox(subscriptions, subscribedProjects),
    routes: webhookDeliveryRoutes({ store, subscriptions, secretGraceMs: config.secretGraceMs, wake }),
    start: () => {
      if (config.deliver) dispatcher.start();
    },
    wake,
    subscriptionsChanged: (projectId) => subscribedProjects.forget(projectId),
    forgetSubscriptions: () => subscribedProjects.forgetAll(),
    stop: () => dispatcher.stop(),
  };
}
