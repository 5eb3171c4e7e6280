import type { RouteDef } from '../rest/route.js';
import { raw } from 'objection';
import { createKey, toApiKey } from '../auth/keys.js';
import { ApiKeyModel } from '../db/models.js';
import { paginate, pageQueryProperties } from '../rest/pagination.js';
import { pageSchema, registerSchema, revision } from '../rest/schemas.js';
import { checkIfMatch } from '../rest/conditional.js';
import { API_PREFIX } from '../rest/openapi.js';
import { errors } from '../errors.js';
import type { Db } from '../db/connect.js';
import { SCOPES } from '../auth/principal.js';

const name = { type: 'string', minLength: 1, maxLength: 200, description: 'What the key is for' };

export const apiKeyCreateSchema = registerSchema({
  $id: 'ApiKeyCreate',
  title: 'ApiKeyCreate',
  description: 'A new API key of this project',
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'name'],
  properties: {
    scope: { enum: SCOPES, description: 'read: reads; write: changes and OTP sessions; admin: keys, webhooks and project lifecycle' },
    name,
  },
});

const ApiKeyUpdateSchema = registerSchema({
  $id: 'ApiKeyUpdate',
  title: 'ApiKeyUpdate',
  description: 'Changes to an API key (its scope never changes: make a new key)',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name },
});

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

export const ApiKeyWithSecretSchema = registerSchema({
  $id: 'ApiKeyWithSecret',
  title: 'ApiKeyWithSecret',
  description: 'A new API key with its secret, shown this once',
  type: 'object',
  additionalProperties: false,
  required: [...apiKeyRequired, 'key'],
  properties: { ...apiKeyProperties, key: { type: 'string', pattern: '^svc_pk_', description: 'The secret: Authorization: Bearer <key>' } },
});

const ApiKeyPageSchema = pageSchema('ApiKeyPage', ApiKeySchema, 'A page of API keys');

export interface ApiKeyDeps {
  db: Db;
  /** Closes every open OTP session that authenticated with the key. */
  onRevoked(keyId: string): Promise<void>;
}

export function apiKeyRoutes({ db, onRevoked }: ApiKeyDeps): RouteDef[] {
  const tag = 'api-keys';
  const find = async (projectId: string, id: string) => {
    const key = await ApiKeyModel.query(db).findOne({ id, project_id: projectId });
    if (!key) throw errors.notFound('API key', id);
    return key;
  };
  return [
    {
      method: 'post', path: '/api-keys', auth: 'admin', tag, status: 201, etag: true, operationId: 'createApiKey', secretAnswer: true,
      body: apiKeyCreateSchema, response: ApiKeyWithSecretSchema,
      summary: 'Create an API key for this project; the answer carries the secret once, as `key`',
      handler: async ({ principal, body, koa }) => {
        const { key, secret } = await createKey(db, principal, body);
        koa.set('Location', `${API_PREFIX}/api-keys/${key.id}`);
        return { ...key, key: secret };
      },
    },
    {
      method: 'get', path: '/api-keys', auth: 'admin', tag, operationId: 'listApiKeys',
      query: { type: 'object', additionalProperties: false, properties: pageQueryProperties },
      response: ApiKeyPageSchema,
      summary: 'List the API keys of this project (never their secrets)',
      handler: ({ principal, query }) => paginate(ApiKeyModel.query(db).where('project_id', principal.projectId), query, toApiKey),
    },
    {
      method: 'get', path: '/api-keys/:id', auth: 'admin', tag, etag: true, operationId: 'getApiKey', response: ApiKeySchema,
      summary: 'Read an API key (never its secret)',
      handler: async ({ principal, params }) => toApiKey(await find(principal.projectId, params.id)),
    },
    {
      method: 'patch', path: '/api-keys/:id', auth: 'admin', tag, etag: true, conditional: true, operationId: 'updateApiKey',
      body: ApiKeyUpdateSchema, response: ApiKeySchema,
      summary: 'Rename an API key',
      handler: async ({ principal, params, body, ifMatch }) =>
        db.transaction(async (trx) => {
          const key = await ApiKeyModel.query(trx).findOne({ id: params.id, project_id: principal.projectId }).forUpdate();
          if (!key) throw errors.notFound('API key', params.id);
          checkIfMatch(ifMatch, key.version, `API key ${params.id}`);
          return toApiKey(await key.$query(trx).patchAndFetch({ name: body.name, version: key.version + 1 }));
        }),
    },
    {
      method: 'delete', path: '/api-keys/:id', auth: 'admin', tag, status: 200, conditional: true, operationId: 'revokeApiKey',
      response: ApiKeySchema,
      summary: 'Revoke an API key; it stops working at once, open OTP sessions included',
      handler: async ({ principal, params, ifMatch }) => {
        const row = await db.transaction(async (trx) => {
          const key = await ApiKeyModel.query(trx).findOne({ id: params.id, project_id: principal.projectId }).forUpdate();
          if (!key) throw errors.notFound('API key', params.id);
          checkIfMatch(ifMatch, key.version, `API key ${params.id}`);
          if (key.revokedAt) return key;
          return key.$query(trx).patchAndFetch({ revokedAt: raw('now()') as unknown as Date, version: key.version + 1 });
        });
        await onRevoked(row.id);
        return toApiKey(row);
      },
    },
  ];
}
