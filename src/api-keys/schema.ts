// Schemas of the api-keys resource: request validation, /openapi.json, and the body types of its
// routes. A key's scope is fixed at creation (a new scope is a new key), so an update renames only.
import { SCOPES } from '../auth/principal.js';
import type { BodyOf } from '../rest/route.js';
import { pageSchema, registerSchema, revision } from '../rest/schemas.js';

const name = { type: 'string', minLength: 1, maxLength: 200, description: 'What the key is for' } as const;

const apiKeyCreate = {
  $id: 'ApiKeyCreate',
  title: 'ApiKeyCreate',
  description: 'A new API key of this project',
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'name'],
  properties: {
    scope: {
      enum: SCOPES,
      description: 'read: reads; write: changes and OTP sessions; admin: keys, webhooks and project lifecycle',
    },
    name,
  },
} as const;
export const ApiKeyCreateSchema = registerSchema(apiKeyCreate);
export type ApiKeyCreate = BodyOf<typeof apiKeyCreate>;

const apiKeyUpdate = {
  $id: 'ApiKeyUpdate',
  title: 'ApiKeyUpdate',
  description: 'Changes to an API key (its scope never changes: make a new key)',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name },
} as const;
export const ApiKeyUpdateSchema = registerSchema(apiKeyUpdate);
export type ApiKeyUpdate = BodyOf<typeof apiKeyUpdate>;

const apiKeyProperties = {
  id: { type: 'string', pattern: '^key_' },
  tenantId: { type: 'string' },
  projectId: { type: 'string' },
  name: { type: 'string' },
  scope: { enum: SCOPES },
  prefix: { type: 'string', description: 'The first characters of the secret, to tell keys apart' },
  createdAt: { type: 'string', format: 'date-time' },
  revokedAt: { type: ['string', 'null'], format: 'date-time', description: 'When it was revoked; null while it works' },
  version: revision,
};
const apiKeyRequired = Object.keys(apiKeyProperties);

export const ApiKeySchema = registerSchema({
  $id: 'ApiKey',
  title: 'ApiKey',
  description: 'An API key, without its secret',
  type: 'object',
  additionalProperties: false,
  required: apiKeyRequired,
  properties: apiKeyProperties,
});

/** Also the `adminKey` of a new project (src/platform/projects/schema.ts). */
export const ApiKeyWithSecretSchema = registerSchema({
  $id: 'ApiKeyWithSecret',
  title: 'ApiKeyWithSecret',
  description: 'A new API key with its secret, shown this once',
  type: 'object',
  additionalProperties: false,
  required: [...apiKeyRequired, 'key'],
  properties: {
    ...apiKeyProperties,
    key: { type: 'string', pattern: '^svc_pk_', description: 'The secret: Authorization: Bearer <key>' },
  },
});

export const ApiKeyPageSchema = pageSchema('ApiKeyPage', ApiKeySchema, 'A page of API keys');
