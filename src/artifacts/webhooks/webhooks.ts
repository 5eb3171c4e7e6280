import { randomBytes } from 'node:crypto';
import { ARTIFACT_OPERATIONS, EventType } from '../../db/change-events.js';
import { errors } from '../../errors.js';
import { IdPrefix } from '../../ids.js';
import { dateTime, labels, text } from '../fields.js';
import { type ArtifactDefinition, defineArtifact } from '../kind.js';
import { checkTargetUrl, TargetRefused } from './targets.js';

/** Every event a subscription may name (docs/webhooks.md), `*` for all. */
export function webhookEventTypes(artifactKinds: readonly string[]): string[] {
  return [
    '*',
    ...artifactKinds.flatMap((kind) => ARTIFACT_OPERATIONS.map((op) => `${kind}.${op}`)),
    ...Object.values(EventType),
  ];
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Subscriptions to events; delivery is the webhook-delivery room's (docs/webhooks.md). */
export function webhooksDefinition(artifactKinds: readonly string[]): ArtifactDefinition {
  const events = webhookEventTypes(artifactKinds);
  return defineArtifact({
    path: 'webhooks',
    kind: 'webhook',
    schemaName: 'Webhook',
    pluralName: 'Webhooks',
    label: 'webhook',
    idPrefix: IdPrefix.webhook,
    description:
      'A subscription: events of the project are sent (POST, JSON, signed with Standard Webhooks headers) to its url. Managing them needs an admin key. See GET /webhooks/{id}/deliveries for what was sent.',
    fields: {
      url: {
        type: 'string',
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2000,
        description:
          'Where events are sent (http or https). Private, loopback and link-local addresses are refused unless the service allows them',
      },
      events: {
        type: 'array',
        minItems: 1,
        maxItems: events.length,
        uniqueItems: true,
        items: { enum: events },
        description: 'Events to send; * for all',
      },
      description: text('What the subscription is for', 1_000),
      active: {
        type: 'boolean',
        default: true,
        description:
          'Inactive subscriptions receive nothing. The service sets it false after sustained failure (see disabledReason); setting it true again resumes delivery',
      },
      secret: {
        type: 'string',
        minLength: 16,
        maxLength: 200,
        writeOnly: true,
        description:
          'Signs each delivery (Standard Webhooks, HMAC-SHA256). A whsec_ secret is base64 of the key; any other string is the key itself. Generated when absent (POST /webhooks/{id}/rotate-secret shows a new one); written, never answered',
      },
      labels,
    },
    required: ['url', 'events'],
    computed: {
      hasSecret: {
        type: 'boolean',
        readOnly: true,
        description: 'Whether deliveries are signed (always, since delivery exists)',
      },
      disabledReason: {
        type: 'string',
        readOnly: true,
        description: 'Why the service set active false (sustained delivery failure)',
      },
      disabledAt: { ...dateTime('When the service set active false'), readOnly: true },
      secretRotatedAt: { ...dateTime('When the secret was last rotated'), readOnly: true },
    },
    filters: ['active', 'events', 'labels'],
    scopes: { read: 'admin', write: 'admin' },
    links: false,
    // A subscription is not news to subscriptions: its changes carry secrets and report nothing.
    events: false,
    hooks: {
      prepare: async ({ op, next, prev, settings, events, principal }) => {
        // Changes of this project are reported from now on, even before the notice of this write.
        events.subscriptionsChanging(principal.projectId);
        if (typeof next.secret !== 'string') next.secret = newWebhookSecret();
        if (prev && next.secret !== prev.data.secret) {
          // A secret written by hand replaces the old one at once (rotate-secret keeps a grace period).
          delete next.previousSecret;
          delete next.previousSecretExpiresAt;
        }
        next.hasSecret = true;
        if (op === 'update' && next.active === true && prev?.data.active === false) {
          delete next.disabledReason;
          delete next.disabledAt;
        }
        if (op === 'create' || next.url !== prev?.data.url) {
          try {
            await checkTargetUrl(String(next.url), settings.allowPrivateWebhookTargets);
          } catch (err) {
            if (err instanceof TargetRefused)
              throw errors.validation('This url may not receive webhooks', [
                { field: 'body.url', message: err.message },
              ]);
            throw err;
          }
        }
      },
    },
  });
}
