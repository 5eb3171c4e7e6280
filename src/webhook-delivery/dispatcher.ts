// The delivery loop every process runs: woken by the outbox's notice (and by a timer for retries that
// fall due, with a poll as the fallback for a lost notice), it claims due deliveries, sends each,
// records the outcome and schedules the retry (the configured schedule, jittered), and disables a
// webhook whose failures go on too long.

import type { WebhookSubscriptions } from '../artifacts/index.js';
import type { WebhookConfig } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { ClaimedDelivery, DeliveryStore } from './delivery-store.js';
import { send } from './sender.js';

/** The wait before the next try after `tries` failed ones, or null when the schedule is used up. */
export function retryDelay(
  config: Pick<WebhookConfig, 'retryScheduleMs' | 'jitter'>,
  tries: number,
  random = Math.random,
): number | null {
  const base = config.retryScheduleMs[tries - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - config.jitter + 2 * config.jitter * random()));
}

export interface DispatcherDeps {
  db: Db;
  store: DeliveryStore;
  subscriptions: WebhookSubscriptions;
  config: WebhookConfig;
  instanceId: string;
  log: Logger;
}

export class WebhookDispatcher {
  private readonly inFlight = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private draining?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** The lease outlasts an attempt (its time limit) and the writing of its outcome. */
  private get leaseMs(): number {
    return this.deps.config.attemptTimeoutMs + 30_000;
  }

  start(): void {
    this.wake();
  }

  /** Look for due deliveries now (a notice came, a delivery was redelivered, an attempt ended). */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.draining = this.drain()
      .catch((err) => this.deps.log.error('webhook dispatch failed', { err }))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async drain(): Promise<void> {
    const { store, config, instanceId } = this.deps;
    for (;;) {
      if (this.stopped) return;
      const free = config.concurrency - this.inFlight.size;
      if (free <= 0) return; // an attempt ending wakes the loop
      const claimed = await store.claim(instanceId, free, this.leaseMs);
      for (const delivery of claimed) this.launch(delivery);
      if (claimed.length < free) break;
    }
    const dueInMs = await store.nextDueInMs();
    if (this.stopped) return;
    const wait = Math.min(config.pollMs, dueInMs ?? config.pollMs);
    this.timer = setTimeout(() => this.wake(), Math.max(wait, 5));
    this.timer.unref();
  }

  private launch(delivery: ClaimedDelivery): void {
    const attempt = this.attempt(delivery)
      .catch((err) => this.deps.log.error('webhook attempt not recorded', { err, deliveryId: delivery.id }))
      .finally(() => {
        this.inFlight.delete(attempt);
        this.wake();
      });
    this.inFlight.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { db, store, subscriptions, config, instanceId, log } = this.deps;
    const target = await subscriptions.target(delivery.webhookId);
    if (!target?.active) return store.abandon(delivery, instanceId, 'the webhook is inactive');
    const outcome = await send({
      url: target.url,
      msgId: delivery.eventId,
      body: delivery.body,
      secrets: target.secrets,
      timeoutMs: config.attemptTimeoutMs,
      allowPrivate: config.allowPrivateTargets,
    });
    const retryInMs = outcome.ok ? null : retryDelay(config, delivery.tries);
    await db.transaction(async (trx) => {
      const health = await store.recordAttempt(trx, delivery, instanceId, outcome, retryInMs);
      if (!health.ours || outcome.ok) return;
      if (health.failures >= config.disableAfterFailures && health.failingForMs >= config.disableAfterMs) {
        const hours = (health.failingForMs / 3600_000).toFixed(1);
        const reason = `Disabled after ${health.failures} failed attempts in a row over ${hours} h; last: ${outcome.error ?? 'failed'}`;
        await subscriptions.disable(trx, delivery.webhookId, reason);
        await store.failWaiting(trx, delivery.webhookId, `webhook disabled: ${reason}`);
        log.info('webhook disabled', { webhookId: delivery.webhookId, reason });
      }
    });
  }

  /** Stops claiming; attempts in flight finish and record their outcome (each within its time limit). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.draining;
    await Promise.allSettled([...this.inFlight]);
  }
}
