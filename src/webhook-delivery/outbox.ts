// The outbox: the ChangeEvents port (src/db/change-events.ts) as this room implements it. Inside the
// transaction of a change, the events some subscription wants become one `webhook_events` row each
// (the body every attempt sends) and one `webhook_deliveries` row per subscription, and a notice wakes
// the dispatchers when the transaction commits. An event no subscription wants writes nothing.
import type { Knex } from 'knex';
import type { WebhookSubscriptions } from '../artifacts/index.js';
import type { ChangeEvent, ChangeEvents } from '../db/change-events.js';
import { notifyAtCommit } from '../db/notifier.js';
import { newId } from '../ids.js';
import type { SubscribedProjects } from './subscribed-projects.js';

/** The body of a delivery: the Standard Webhooks shape (type, timestamp, data) with the event's id and project. */
export function eventBody(id: string, event: ChangeEvent, at: Date): string {
  return JSON.stringify({
    id,
    type: event.type,
    timestamp: at.toISOString(),
    tenantId: event.tenantId,
    projectId: event.projectId,
    data: event.data,
  });
}

export class Outbox implements ChangeEvents {
  constructor(
    private readonly subscriptions: WebhookSubscriptions,
    private readonly subscribedProjects: SubscribedProjects,
  ) {}

  mayRecord(projectId: string): Promise<boolean> {
    return this.subscribedProjects.subscribed(projectId);
  }

  subscriptionsChanging(projectId: string): void {
    this.subscribedProjects.pin(projectId);
  }

  async record(trx: Knex, input: ChangeEvent | readonly ChangeEvent[]): Promise<void> {
    const events: readonly ChangeEvent[] = Array.isArray(input) ? input : [input as ChangeEvent];
    if (!events.length) return;
    // Matched now, in the change's transaction: the subscriptions of the moment the change happened.
    const wanted = await this.subscriptions.subscribed(trx, events);
    const eventRows: Array<Record<string, unknown>> = [];
    const deliveryRows: Array<Record<string, unknown>> = [];
    const at = new Date();
    events.forEach((event, i) => {
      if (!wanted[i].length) return;
      const id = newId('evt');
      eventRows.push({
        id,
        tenant_id: event.tenantId,
        project_id: event.projectId,
        type: event.type,
        body: eventBody(id, event, at),
      });
      for (const webhookId of wanted[i])
        deliveryRows.push({ id: newId('whd'), event_id: id, webhook_id: webhookId, project_id: event.projectId });
    });
    if (!eventRows.length) return;
    await trx('webhook_events').insert(eventRows);
    await trx('webhook_deliveries').insert(deliveryRows);
    await notifyAtCommit(trx, { kind: 'webhooks' });
  }
}
