// The routes of delivery beside the webhook resource's own: its delivery log, redelivery and secret
// rotation. All need an admin key, like the subscriptions.

import type { WebhookSubscriptions } from '../artifacts/index.js';
import { errors } from '../errors.js';
import { pageQueryProperties } from '../rest/pagination.js';
import { type RouteDef, route } from '../rest/route.js';
import { pageSchema } from '../rest/schemas.js';
import { registerSchema } from '../validation/schema-registry.js';
import type { BodyOf, QueryOf } from '../validation/schema-types.js';
import { DELIVERY_STATUSES, type DeliveryStore } from './delivery-store.js';
import { webhookEvents } from './event-schemas.js';

const time = (description: string) => ({ type: ['string', 'null'], format: 'date-time', description });

const deliveryProperties = {
  id: { type: 'string', pattern: '^whd_', description: 'Id of the delivery (one per event and webhook)' },
  webhookId: { type: 'string' },
  eventId: { type: 'string', pattern: '^evt_', description: 'The event, and the webhook-id header of every attempt' },
  eventType: { type: 'string', description: 'The event type (docs/webhooks.md)' },
  status: {
    enum: DELIVERY_STATUSES,
    description:
      'pending: an attempt is due or in flight; succeeded: a 2xx answer; failed: retries used up, or the webhook was disabled',
  },
  attempts: { type: 'integer', minimum: 0, description: 'Attempts made, redeliveries included' },
  nextAttemptAt: time('When the next attempt is due (pending only)'),
  lastAttemptAt: time('When the last attempt began'),
  lastStatusCode: { type: ['integer', 'null'], description: 'HTTP status of the last answer (null: no answer)' },
  lastError: { type: ['string', 'null'], description: 'Why the last attempt failed' },
  succeededAt: time('When an attempt succeeded'),
  createdAt: { type: 'string', format: 'date-time' },
  attemptLog: {
    type: 'array',
    description: 'Every attempt, oldest first',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['attemptedAt', 'durationMs', 'statusCode', 'error', 'responseExcerpt'],
      properties: {
        attemptedAt: { type: 'string', format: 'date-time' },
        durationMs: { type: 'integer', minimum: 0 },
        statusCode: { type: ['integer', 'null'] },
        error: { type: ['string', 'null'] },
        responseExcerpt: { type: ['string', 'null'], description: 'The first KiB of the answer' },
      },
    },
  },
} as const;

const DeliverySchema = registerSchema({
  $id: 'WebhookDelivery',
  title: 'WebhookDelivery',
  description: 'One event sent to one webhook: its state and every attempt',
  type: 'object',
  additionalProperties: false,
  required: Object.keys(deliveryProperties),
  properties: deliveryProperties,
});

const DeliveryDetailSchema = registerSchema({
  $id: 'WebhookDeliveryDetail',
  title: 'WebhookDeliveryDetail',
  description: 'A delivery with the body every attempt sends',
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(deliveryProperties), 'payload'],
  properties: {
    ...deliveryProperties,
    payload: { type: 'object', description: 'The body sent (one of the *Event schemas)' },
  },
});

const DeliveryPageSchema = pageSchema('WebhookDeliveryPage', DeliverySchema, 'Deliveries of a webhook, newest first');

const deliveryQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { enum: DELIVERY_STATUSES, description: 'Only deliveries in this state' },
    eventType: { enum: webhookEvents.map((e) => e.type), description: 'Only deliveries of this event type' },
  },
} as const;

const rotateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    secret: {
      type: 'string',
      minLength: 16,
      maxLength: 200,
      description: 'The new secret; generated (whsec_...) when absent',
    },
    graceSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 7 * 24 * 3600,
      description: 'How long the old secret keeps signing beside the new one (default 24 h; 0 ends it at once)',
    },
  },
} as const;

const RotatedSchema = registerSchema({
  $id: 'WebhookSecretRotated',
  title: 'WebhookSecretRotated',
  description: 'The new secret, shown this once',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'secret', 'previousSecretExpiresAt'],
  properties: {
    id: { type: 'string', description: 'The webhook' },
    secret: { type: 'string', description: 'Signs every delivery from now on' },
    previousSecretExpiresAt: time(
      'Until when deliveries carry a second signature with the old secret (null: not at all)',
    ),
  },
});

export interface DeliveryRoutesDeps {
  store: DeliveryStore;
  subscriptions: WebhookSubscriptions;
  secretGraceMs: number;
  /** A delivery was made due: look for it now. */
  wake(): void;
}

export function webhookDeliveryRoutes({ store, subscriptions, secretGraceMs, wake }: DeliveryRoutesDeps): RouteDef[] {
  const tag = 'webhooks';
  return [
    route<unknown, QueryOf<typeof deliveryQuery>>({
      method: 'get',
      path: '/webhooks/:id/deliveries',
      auth: 'admin',
      tag,
      operationId: 'listWebhookDeliveries',
      summary: 'The delivery log of a webhook: each event sent to it, newest first, with every attempt',
      query: deliveryQuery,
      response: DeliveryPageSchema,
      handler: async ({ principal, params, query }) => {
        await subscriptions.find(principal.projectId, params.id);
        return store.list(params.id, query);
      },
    }),
    {
      method: 'get',
      path: '/webhooks/:id/deliveries/:deliveryId',
      auth: 'admin',
      tag,
      operationId: 'getWebhookDelivery',
      summary: 'One delivery with its attempts and the body it sends',
      response: DeliveryDetailSchema,
      handler: async ({ principal, params }) => {
        await subscriptions.find(principal.projectId, params.id);
        return store.get(params.id, params.deliveryId);
      },
    },
    {
      method: 'post',
      path: '/webhooks/:id/deliveries/:deliveryId/redeliver',
      auth: 'admin',
      tag,
      status: 202,
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again, with the same webhook-id, from the start of the retry schedule',
      description:
        'Any delivery, succeeded or failed. 409 while one of its attempts is in flight, or while the webhook is inactive.',
      response: DeliverySchema,
      handler: async ({ principal, params }) => {
        const webhook = await subscriptions.find(principal.projectId, params.id);
        if (!webhook.active)
          throw errors.conflict(`Webhook ${params.id} is inactive; set active to true first`, { webhookId: params.id });
        await store.redeliver(params.id, params.deliveryId);
        wake();
        const { payload: _payload, ...delivery } = await store.get(params.id, params.deliveryId);
        return delivery;
      },
    },
    route<BodyOf<typeof rotateBody>>({
      method: 'post',
      path: '/webhooks/:id/rotate-secret',
      auth: 'admin',
      tag,
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; the old one keeps signing beside it for a grace period',
      description:
        'During the grace period each delivery carries two signatures in webhook-signature (Standard Webhooks allows several), so a receiver can switch secrets without losing one. The answer shows the new secret this once.',
      body: rotateBody,
      response: RotatedSchema,
      secretAnswer: true,
      handler: async ({ principal, params, body }) => {
        const graceMs = body.graceSeconds === undefined ? secretGraceMs : body.graceSeconds * 1000;
        const rotated = await subscriptions.rotateSecret(principal.projectId, params.id, body.secret, graceMs);
        return { id: params.id, ...rotated };
      },
    }),
  ];
}
