import type { RouteDef } from '../../rest/route.js';
import { createKey, toApiKey } from '../../auth/keys.js';
import { paginate, pageQueryProperties } from '../../rest/pagination.js';
import { errors } from '../../errors.js';
import type { Db } from '../../db/connect.js';
import { SCOPES } from '../../auth/principal.js';

export const apiKeyCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'name'],
  properties: {
    scope: { enum: SCOPES, description: 'read: reads; write: changes and OTP sessions; admin: keys and project lifecycle' },
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'What the key is for' },
  },
};

export interface ApiKeyDeps {
  db: Db;
  /** Closes every open OTP session that authenticated with the key. */
  onRevoked(keyId: string): Promise<void>;
}

export function apiKeyRoutes({ db, onRevoked }: ApiKeyDeps): RouteDef[] {
  const tag = 'api-keys';
  return [
    {
      method: 'post', path: '/api-keys', auth: 'admin', tag, status: 201, body: apiKeyCreateSchema,
      summary: 'Create an API key for this project; the answer carries the secret once, as `key`',
      handler: async ({ principal, body }) => {
        const { key, secret } = await createKey(db, principal, body);
        return { ...key, key: secret };
      },
    },
    {
      method: 'get', path: '/api-keys', auth: 'admin', tag,
      query: { type: 'object', properties: pageQueryProperties },
      summary: 'List the API keys of this project (never their secrets)',
      handler: ({ principal, query }) => paginate(db('api_keys').where('project_id', principal.projectId), query, toApiKey),
    },
    {
      method: 'delete', path: '/api-keys/:id', auth: 'admin', tag, status: 200,
      summary: 'Revoke an API key; it stops working at once, open OTP sessions included',
      handler: async ({ principal, params }) => {
        const [row] = await db('api_keys')
          .where({ id: params.id, project_id: principal.projectId })
          .update({ revoked_at: db.raw('coalesce(revoked_at, now())') })
          .returning('*');
        if (!row) throw errors.notFound('API key', params.id);
        await onRevoked(row.id);
        return toApiKey(row);
      },
    },
  ];
}
