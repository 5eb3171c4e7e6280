// What webhook delivery (src/webhook-delivery/) needs of the subscriptions, which are artifacts of kind
// `webhook`: who wants an event, where and with which secrets to send, and the two changes delivery
// makes to a subscription (disabling it after sustained failure, rotating its secret).
import type { Knex } from 'knex';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { newWebhookSecret } from './webhooks.js';

export interface WebhookTarget {
  id: string;
  tenantId: string;
  projectId: string;
  url: string;
  active: boolean;
  /** The current secret first, then the previous one while its grace period lasts. */
  secrets: string[];
}

/** What delivery reads of a subscription's stored data (the webhook artifact's fields, secrets included). */
interface SubscriptionData {
  url: string;
  secret: string;
  active?: boolean;
  previousSecret?: string;
  previousSecretExpiresAt?: string;
}

function targetOf(
  row: { id: string; tenant_id: string; project_id: string; data: SubscriptionData },
  now = Date.now(),
): WebhookTarget {
  const { data } = row;
  const secrets = [data.secret];
  if (typeof data.previousSecret === 'string' && Date.parse(data.previousSecretExpiresAt ?? '') > now)
    secrets.push(data.previousSecret);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    projectId: row.project_id,
    url: data.url,
    active: data.active !== false,
    secrets,
  };
}

export class WebhookSubscriptions {
  constructor(private readonly db: Db) {}

  private webhooks(db: Knex = this.db) {
    return db('artifacts').where('kind', 'webhook');
  }

  /** For each event, by position, the ids of its project's active subscriptions that want its type. One query. */
  async subscribed(trx: Knex, events: ReadonlyArray<{ projectId: string; type: string }>): Promise<string[][]> {
    const out: string[][] = events.map(() => []);
    if (!events.length) return out;
    const { rows } = await trx.raw(
      `SELECT x.i::int AS i, a.id
         FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS x(project_id, type, i)
         JOIN artifacts a ON a.project_id = x.project_id AND a.kind = 'webhook'
        WHERE (a.data->>'active')::boolean IS NOT FALSE
          AND (jsonb_exists(a.data->'events', x.type) OR jsonb_exists(a.data->'events', '*'))
        ORDER BY a.id`,
      [events.map((e) => e.projectId), events.map((e) => e.type)],
    );
    for (const row of rows as Array<{ i: number; id: string }>) out[row.i - 1].push(row.id);
    return out;
  }

  /** Whether the project has an active subscription at all (the outbox's SubscribedProjects asks). */
  async anyActive(projectId: string): Promise<boolean> {
    const row = await this.webhooks()
      .where('project_id', projectId)
      .whereRaw(`(data->>'active')::boolean IS NOT FALSE`)
      .first(this.db.raw('1 AS one'));
    return row !== undefined;
  }

  /** A subscription of any project (the dispatcher's view), or null when it is gone. */
  async target(id: string): Promise<WebhookTarget | null> {
    const row = await this.webhooks().where('id', id).first('id', 'tenant_id', 'project_id', 'data');
    return row ? targetOf(row) : null;
  }

  /** A subscription of the caller's project; another project's id is a 404. */
  async find(projectId: string, id: string): Promise<WebhookTarget> {
    const row = await this.webhooks()
      .where({ id, project_id: projectId })
      .first('id', 'tenant_id', 'project_id', 'data');
    if (!row) throw errors.notFound('Webhook', id);
    return targetOf(row);
  }

  /** Sets active false with the reason, inside the dispatcher's transaction. */
  async disable(trx: Knex, id: string, reason: string): Promise<void> {
    await this.webhooks(trx)
      .where('id', id)
      .whereRaw(`(data->>'active')::boolean IS NOT FALSE`)
      .update({
        data: trx.raw(`data || jsonb_build_object('active', false, 'disabledReason', ?::text, 'disabledAt', ?::text)`, [
          reason,
          new Date().toISOString(),
        ]),
        version: trx.raw('version + 1'),
        updated_at: trx.fn.now(),
      });
  }

  /**
   * A new secret (the one given, or a generated one). The old one keeps signing, beside the new one,
   * for `graceMs`, so receivers can switch without losing a delivery.
   */
  async rotateSecret(
    projectId: string,
    id: string,
    secret: string | undefined,
    graceMs: number,
  ): Promise<{ secret: string; previousSecretExpiresAt: string | null }> {
    return this.db.transaction(async (trx) => {
      const row = await this.webhooks(trx).where({ id, project_id: projectId }).forUpdate().first('data');
      if (!row) throw errors.notFound('Webhook', id);
      const next = secret ?? newWebhookSecret();
      const now = Date.now();
      const expiresAt = graceMs > 0 ? new Date(now + graceMs).toISOString() : null;
      const data = { ...row.data, secret: next, hasSecret: true, secretRotatedAt: new Date(now).toISOString() };
      delete data.previousSecret;
      delete data.previousSecretExpiresAt;
      if (expiresAt && typeof row.data.secret === 'string')
        Object.assign(data, { previousSecret: row.data.secret, previousSecretExpiresAt: expiresAt });
      await this.webhooks(trx)
        .where('id', id)
        .update({ data: JSON.stringify(data), version: trx.raw('version + 1'), updated_at: trx.fn.now() });
      return { secret: next, previousSecretExpiresAt: data.previousSecretExpiresAt ?? null };
    });
  }
}
