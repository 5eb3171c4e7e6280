// The five REST routes of a resource, from its definition, its schemas and a store: create, list,
// read, update (JSON merge patch, If-Match) and delete (If-Match). Every resource gets the same
// conventions; routes that are not CRUD are written by hand with route() beside these.

import { API_PREFIX } from '../openapi.js';
import { type JsonSchema, type RouteDef, route } from '../route.js';
import type { Data, ResourceDefinition } from './definition.js';
import type { ResourceSchemas } from './schemas.js';
import type { ListQuery, ResourceStore } from './store.js';

export interface ResourceRouteOptions {
  /** Error statuses of create beyond the usual (402 for quota-counted artifacts, 409 for duplicates). */
  createErrors?: number[];
  updateErrors?: number[];
  deleteErrors?: number[];
  /** Answer of create when it differs from the record (e.g. a project with its first key). */
  createResponse?: JsonSchema;
  /** The create answer holds a secret shown once (see RouteDef.secretAnswer). */
  createAnswersSecret?: boolean;
  /** Extra text for the operations. */
  notes?: { create?: string; update?: string; delete?: string; list?: string };
}

export function resourceRoutes(
  def: ResourceDefinition,
  schemas: ResourceSchemas,
  store: ResourceStore,
  options: ResourceRouteOptions = {},
): RouteDef[] {
  const base = `/${def.path}`;
  const item = `${base}/:id`;
  const tag = def.path;
  const { read, write } = def.scopes ?? { read: 'read', write: 'write' };
  const name = def.schemaName;
  return [
    route<Data>({
      method: 'post',
      path: base,
      auth: write,
      tag,
      status: 201,
      etag: true,
      operationId: `create${name}`,
      summary: `Create a ${def.label}`,
      description: options.notes?.create,
      body: schemas.create,
      response: options.createResponse ?? schemas.record,
      errors: options.createErrors,
      secretAnswer: options.createAnswersSecret,
      handler: async ({ principal, body, koa }) => {
        const created = await store.create(principal, body);
        koa.set('Location', `${API_PREFIX}${base}/${created.id}`);
        return created;
      },
    }),
    route<unknown, ListQuery>({
      method: 'get',
      path: base,
      auth: read,
      tag,
      operationId: `list${def.pluralName}`,
      summary: `List ${def.label} records, filtered and paged by cursor`,
      description: options.notes?.list,
      query: schemas.query,
      response: schemas.page,
      handler: ({ principal, query }) => store.list(principal, query),
    }),
    {
      method: 'get',
      path: item,
      auth: read,
      tag,
      etag: true,
      operationId: `get${name}`,
      summary: `Read a ${def.label}`,
      response: schemas.record,
      handler: ({ principal, params }) => store.get(principal, params.id),
    },
    route<Data>({
      method: 'patch',
      path: item,
      auth: write,
      tag,
      etag: true,
      conditional: true,
      operationId: `update${name}`,
      summary: `Change a ${def.label} (merge patch; If-Match guards against lost updates)`,
      description: options.notes?.update,
      body: schemas.update,
      response: schemas.record,
      errors: options.updateErrors,
      handler: ({ principal, params, body, ifMatch }) => store.update(principal, params.id, body, ifMatch),
    }),
    {
      method: 'delete',
      path: item,
      auth: write,
      tag,
      conditional: true,
      status: 204,
      operationId: `delete${name}`,
      summary: `Delete a ${def.label}`,
      description: options.notes?.delete,
      errors: options.deleteErrors,
      handler: async ({ principal, params, ifMatch }) => {
        await store.remove(principal, params.id, ifMatch);
        return undefined;
      },
    },
  ];
}
