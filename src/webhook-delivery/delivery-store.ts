// Every statement on webhook_events, webhook_deliveries, webhook_attempts and webhook_health: claiming
// due deliveries (SKIP LOCKED and a lease, so one delivery is in flight in one process at a time),
// writing an attempt's outcome with the webhook's health in one transaction, the delivery log, and
// redelivery.
import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { errors } from '../errors.js';
import type { Page } from '../rest/pagination.js';

export interface ClaimedDelivery {
  id: string;
  eventId: string;
  eventType: string;
  webhookId: string;
  /** Attempts ever made, this one included; the claim is ours while `attempts` and `leased_by` still match. */
  attempts: number;
  /** Attempts since the delivery (re)started, this one included: the retry schedule's position. */
  tries: number;
  body: string;
}

export interface AttemptOutcome {
  ok: boolean;
  statusCode?: number;
  error?: string;
  excerpt?: string;
  durationMs: number;
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** A row of webhook_deliveries, with its event's type and its attempts (LOG) joined. */
interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  succeeded_at: Date | null;
  created_at: Date;
  log: AttemptLogEntry[] | null;
}

/** One attempt as LOG builds it in JSON (its time as text). */
interface AttemptLogEntry {
  attemptedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
}

function deliveryView(row: DeliveryRow) {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    lastAttemptAt: iso(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    succeededAt: iso(row.succeeded_at),
    createdAt: iso(row.created_at),
    attemptLog: (row.log ?? []).map((a) => ({
      attemptedAt: new Date(a.attemptedAt).toISOString(),
      durationMs: a.durationMs,
      statusCode: a.statusCode,
      error: a.error,
      responseExcerpt: a.responseExcerpt,
    })),
  };
}
export type DeliveryView = ReturnType<typeof deliveryView>;

const LOG = `coalesce((SELECT json_agg(json_build_object('attemptedAt', a.attempted_at, 'durationMs', a.duration_ms, 'statusCode', a.status_code,
                                                      'error', a.error, 'responseExcerpt', a.response_excerpt) ORDER BY a.id)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS log`;

/** A claimed delivery as the claim's UPDATE returns it. */
interface ClaimRow {
  id: string;
  event_id: string;
  type: string;
  webhook_id: string;
  attempts: number;
  tries: number;
  body: string;
}

export class DeliveryStore {
  constructor(private readonly db: Db) {}

  /** Up to `limit` due deliveries, leased to `instanceId` for `leaseMs`, oldest due first. One statement. */
  async claim(instanceId: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const { rows } = await this.db.raw(
      `UPDATE webhook_deliveries d
          SET leased_by = ?, lease_until = now() + make_interval(secs => ?), attempts = d.attempts + 1, tries = d.tries + 1,
              last_attempt_at = now()
         FROM webhook_events e
        WHERE d.id IN (SELECT id FROM webhook_deliveries
                        WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
                        ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)
          AND e.id = d.event_id
       RETURNING d.id, d.event_id, e.type, d.webhook_id, d.attempts, d.tries, e.body`,
      [instanceId, leaseMs / 1000, limit],
    );
    return (rows as ClaimRow[]).map((r) => ({
      id: r.id,
      eventId: r.event_id,
      eventType: r.type,
      webhookId: r.webhook_id,
      attempts: r.attempts,
      tries: r.tries,
      body: r.body,
    }));
  }

  /** Milliseconds until the next pending delivery is due (0 when one is), or null when none is pending. */
  async nextDueInMs(): Promise<number | null> {
    // min() is NULL with nothing pending; greatest() would turn that NULL into 0 (due now), and an
    // idle dispatcher would poll every few milliseconds.
    const row = await this.db('webhook_deliveries')
      .where('status', 'pending')
      .first(
        this.db.raw(
          `(extract(epoch from min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) - now()) * 1000)::int AS ms`,
        ),
      );
    return row?.ms == null ? null : Math.max(0, row.ms);
  }

  /** A claimed delivery whose webhook is inactive or gone: failed without an attempt. */
  async abandon(delivery: ClaimedDelivery, instanceId: string, reason: string): Promise<void> {
    await this.db('webhook_deliveries')
      .where({ id: delivery.id, leased_by: instanceId, attempts: delivery.attempts })
      .update({
        status: 'failed',
        leased_by: null,
        lease_until: null,
        attempts: delivery.attempts - 1,
        tries: delivery.tries - 1,
        last_error: reason,
      });
  }

  /**
   * One attempt's outcome, in one transaction: its log row, the delivery's next state (succeeded, a
   * retry at `retryInMs`, or failed when `retryInMs` is null), and the webhook's run of failures. A
   * claim that is no longer ours (the lease ran out and another process took it) only adds the log row.
   * Answers the webhook's consecutive failures and how long it has been failing (0 after a success).
   */
  async recordAttempt(
    trx: Knex.Transaction,
    delivery: ClaimedDelivery,
    instanceId: string,
    outcome: AttemptOutcome,
    retryInMs: number | null,
  ): Promise<{ ours: boolean; failures: number; failingForMs: number }> {
    await trx('webhook_attempts').insert({
      delivery_id: delivery.id,
      duration_ms: Math.round(outcome.durationMs),
      status_code: outcome.statusCode ?? null,
      error: outcome.error ?? null,
      response_excerpt: outcome.excerpt ?? null,
      instance_id: instanceId,
    });
    const next = outcome.ok
      ? { status: 'succeeded', succeeded_at: trx.fn.now() }
      : retryInMs === null
        ? { status: 'failed' }
        : { status: 'pending', next_attempt_at: trx.raw('now() + make_interval(secs => ?)', [retryInMs / 1000]) };
    const updated = await trx('webhook_deliveries')
      .where({ id: delivery.id, leased_by: instanceId, attempts: delivery.attempts })
      .update({
        ...next,
        leased_by: null,
        lease_until: null,
        last_status_code: outcome.statusCode ?? null,
        last_error: outcome.ok ? null : (outcome.error ?? null),
      });
    if (!updated) return { ours: false, failures: 0, failingForMs: 0 };
    if (outcome.ok) {
      await trx.raw(
        `INSERT INTO webhook_health (webhook_id, consecutive_failures, failing_since, last_success_at) VALUES (?, 0, NULL, now())
         ON CONFLICT (webhook_id) DO UPDATE SET consecutive_failures = 0, failing_since = NULL, last_success_at = now()`,
        [delivery.webhookId],
      );
      return { ours: true, failures: 0, failingForMs: 0 };
    }
    const { rows } = await trx.raw(
      `INSERT INTO webhook_health (webhook_id, consecutive_failures, failing_since) VALUES (?, 1, now())
       ON CONFLICT (webhook_id) DO UPDATE SET consecutive_failures = webhook_health.consecutive_failures + 1,
                                              failing_since = coalesce(webhook_health.failing_since, now())
       RETURNING consecutive_failures, (extract(epoch from now() - failing_since) * 1000)::bigint AS failing_ms`,
      [delivery.webhookId],
    );
    return { ours: true, failures: rows[0].consecutive_failures, failingForMs: Number(rows[0].failing_ms) };
  }

  /** After the webhook was disabled: its waiting deliveries fail with the reason, and its failure count starts over. */
  async failWaiting(trx: Knex.Transaction, webhookId: string, reason: string): Promise<void> {
    await trx('webhook_deliveries')
      .where({ webhook_id: webhookId, status: 'pending' })
      .where((q) => q.whereNull('lease_until').orWhere('lease_until', '<', trx.fn.now()))
      .update({ status: 'failed', last_error: reason, leased_by: null, lease_until: null });
    await trx('webhook_health').where('webhook_id', webhookId).delete();
  }

  /** The webhook's deliveries, newest first, each with its attempts. */
  async list(
    webhookId: string,
    page: { limit?: number; cursor?: string; status?: string; eventType?: string },
  ): Promise<Page<DeliveryView>> {
    const limit = page.limit ?? 50;
    const q = this.db('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where('d.webhook_id', webhookId)
      .select('d.*', 'e.type', this.db.raw(LOG))
      .orderBy('d.id', 'desc')
      .limit(limit + 1);
    if (page.cursor) q.where('d.id', '<', page.cursor);
    if (page.status) q.where('d.status', page.status);
    if (page.eventType) q.where('e.type', page.eventType);
    const rows = await q;
    const more = rows.length > limit;
    const items = (more ? rows.slice(0, limit) : rows).map(deliveryView);
    return { items, nextCursor: more ? items[limit - 1].id : null };
  }

  /** One delivery of the webhook with its attempts and the body it sends. */
  async get(webhookId: string, deliveryId: string): Promise<DeliveryView & { payload: unknown }> {
    const row = await this.db('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where({ 'd.webhook_id': webhookId, 'd.id': deliveryId })
      .first('d.*', 'e.type', 'e.body', this.db.raw(LOG));
    if (!row) throw errors.notFound('Delivery', deliveryId);
    return { ...deliveryView(row), payload: JSON.parse(row.body) };
  }

  /** Sends the delivery again from the start of the retry schedule; 409 while an attempt is in flight. */
  async redeliver(webhookId: string, deliveryId: string): Promise<void> {
    const updated = await this.db('webhook_deliveries')
      .where({ webhook_id: webhookId, id: deliveryId })
      .where((q) => q.whereNull('lease_until').orWhere('lease_until', '<', this.db.fn.now()))
      .update({ status: 'pending', tries: 0, next_attempt_at: this.db.fn.now(), leased_by: null, lease_until: null });
    if (updated) return;
    const exists = await this.db('webhook_deliveries').where({ webhook_id: webhookId, id: deliveryId }).first('id');
    if (!exists) throw errors.notFound('Delivery', deliveryId);
    throw errors.conflict(`Delivery ${deliveryId} is being sent right now; ask again when its attempt is over`, {
      deliveryId,
    });
  }
}
