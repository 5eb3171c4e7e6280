// api-keys: the keys of the caller's project, for admin keys only. Not a generic resource (its
// create answers the secret once, its delete revokes and answers the revoked key), so its routes are
// written here; the rules live in the store.

import type { Db } from '../db/connect.js';
import { API_PREFIX } from '../rest/openapi.js';
import { type PageQuery, pageQuerySchema } from '../rest/pagination.js';
import { type RouteDef, route } from '../rest/route.js';
import {
  type ApiKeyCreate,
  ApiKeyCreateSchema,
  ApiKeyPageSchema,
  ApiKeySchema,
  type ApiKeyUpdate,
  ApiKeyUpdateSchema,
  ApiKeyWithSecretSchema,
} from './schema.js';
import { ApiKeyStore } from './store.js';

export interface ApiKeyDeps {
  db: Db;
  /** Closes every open OTP session that authenticated with the key. */
  onRevoked(keyId: string): Promise<void>;
}

export function apiKeyRoutes({ db, onRevoked }: ApiKeyDeps): RouteDef[] {
  const tag = 'api-keys';
  const keys = new ApiKeyStore(db);
  return [
    route<ApiKeyCreate>({
      method: 'post',
      path: '/api-keys',
      auth: 'admin',
      tag,
      status: 201,
      etag: true,
      operationId: 'createApiKey',
      secretAnswer: true,
      body: ApiKeyCreateSchema,
      response: ApiKeyWithSecretSchema,
      summary: 'Create an API key for this project; the answer carries the secret once, as `key`',
      handler: async ({ principal, body, koa }) => {
        const created = await keys.create(principal, body);
        koa.set('Location', `${API_PREFIX}/api-keys/${created.id}`);
        return created;
      },
    }),
    route<unknown, PageQuery>({
      method: 'get',
      path: '/api-keys',
      auth: 'admin',
      tag,
      operationId: 'listApiKeys',
      query: pageQuerySchema,
      response: ApiKeyPageSchema,
      summary: 'List the API keys of this project (never their secrets)',
      handler: ({ principal, query }) => keys.list(principal, query),
    }),
    {
      method: 'get',
      path: '/api-keys/:id',
      auth: 'admin',
      tag,
      etag: true,
      operationId: 'getApiKey',
      response: ApiKeySchema,
      summary: 'Read an API key (never its secret)',
      handler: ({ principal, params }) => keys.get(principal, params.id),
    },
    route<ApiKeyUpdate>({
      method: 'patch',
      path: '/api-keys/:id',
      auth: 'admin',
      tag,
      etag: true,
      conditional: true,
      operationId: 'updateApiKey',
      body: ApiKeyUpdateSchema,
      response: ApiKeySchema,
      summary: 'Rename an API key',
      handler: ({ principal, params, body, ifMatch }) => keys.rename(principal, params.id, body, ifMatch),
    }),
    {
      method: 'delete',
      path: '/api-keys/:id',
      auth: 'admin',
      tag,
      status: 200,
      conditional: true,
      operationId: 'revokeApiKey',
      response: ApiKeySchema,
      summary: 'Revoke an API key; it stops working at once, open OTP sessions included',
      handler: async ({ principal, params, ifMatch }) => {
        const revoked = await keys.revoke(principal, params.id, ifMatch);
        await onRevoked(revoked.id);
        return revoked;
      },
    },
  ];
}
