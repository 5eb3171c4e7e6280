import { IdPrefix } from '../../ids.js';
import { defineArtifact, type ArtifactDefinition } from '../kind.js';
import { labels, text } from '../fields.js';

/** Subscriptions to events; delivery (signed with the secret) is described where it is built. */
export function webhooksDefinition(artifactKinds: readonly string[]): ArtifactDefinition {
  const events = [
    '*',
    ...artifactKinds.flatMap((kind) => [`${kind}.created`, `${kind}.updated`, `${kind}.deleted`]),
    'otp_run.finished',
    'test_run.closed',
  ];
  return defineArtifact({
    path: 'webhooks',
    kind: 'webhook',
    schemaName: 'Webhook',
    pluralName: 'Webhooks',
    label: 'webhook',
    idPrefix: IdPrefix.webhook,
    description: 'A subscription: events of the project are sent (POST, JSON) to its url. Managing them needs an admin key.',
    fields: {
      url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000, description: 'Where events are sent (http or https)' },
      events: {
        type: 'array',
        minItems: 1,
        maxItems: events.length,
        uniqueItems: true,
        items: { enum: events },
        description: 'Events to send; * for all',
      },
      description: text('What the subscription is for', 1_000),
      active: { type: 'boolean', default: true, description: 'Inactive subscriptions receive nothing' },
      secret: {
        type: 'string',
        minLength: 16,
        maxLength: 200,
        writeOnly: true,
        description: 'Signs each delivery (HMAC-SHA256); written, never answered',
      },
      labels,
    },
    required: ['url', 'events'],
    computed: { hasSecret: { type: 'boolean', readOnly: true, description: 'Whether deliveries are signed' } },
    filters: ['active', 'events', 'labels'],
    scopes: { read: 'admin', write: 'admin' },
    links: false,
    hooks: {
      prepare: ({ next }) => {
        next.hasSecret = typeof next.secret === 'string';
      },
    },
  });
}
