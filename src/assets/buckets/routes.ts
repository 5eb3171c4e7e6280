import { API_PREFIX } from '../../rest/openapi.js';
import { type PageQuery, pageQuerySchema } from '../../rest/pagination.js';
import { type RouteDef, route } from '../../rest/route.js';
import type { BucketService } from './bucket-service.js';
import {
  type BucketCreate,
  BucketCreateSchema,
  BucketPageSchema,
  BucketSchema,
  type BucketUpdate,
  BucketUpdateSchema,
} from './schema.js';

export function bucketRoutes(buckets: BucketService): RouteDef[] {
  const tag = 'assets';
  return [
    route<unknown, PageQuery>({
      method: 'get',
      path: '/assets/buckets',
      auth: 'read',
      tag,
      operationId: 'listBuckets',
      query: pageQuerySchema,
      response: BucketPageSchema,
      summary: 'Buckets of the project (system buckets profil, otp-evidence and _deletion included), with their usage',
      handler: ({ principal, query }) => buckets.list(principal, query),
    }),
    route<BucketCreate>({
      method: 'post',
      path: '/assets/buckets',
      auth: 'write',
      tag,
      status: 201,
      etag: true,
      operationId: 'createBucket',
      body: BucketCreateSchema,
      response: BucketSchema,
      summary: 'Create a bucket, optionally with its driver, size limit and allowed content types',
      description:
        'A name already used in the project is a 409; a driver this service has no configuration for is a 400.',
      handler: async ({ principal, body, koa }) => {
        const created = await buckets.create(principal, body);
        koa.set('Location', `${API_PREFIX}/assets/buckets/${created.id}`);
        return created;
      },
    }),
    {
      method: 'get',
      path: '/assets/buckets/:id',
      auth: 'read',
      tag,
      etag: true,
      operationId: 'getBucket',
      response: BucketSchema,
      summary: 'A bucket, by id or by name',
      handler: ({ principal, params }) => buckets.read(principal, params.id),
    },
    route<BucketUpdate>({
      method: 'patch',
      path: '/assets/buckets/:id',
      auth: 'write',
      tag,
      etag: true,
      conditional: true,
      operationId: 'updateBucket',
      body: BucketUpdateSchema,
      response: BucketSchema,
      summary: "Change a bucket's driver (for new assets), size limit or allowed content types",
      description:
        'Limits apply to uploads from now on; stored assets stay as they are. If-Match guards against lost updates.',
      handler: ({ principal, params, body, ifMatch }) => buckets.update(principal, params.id, body, ifMatch),
    }),
    {
      method: 'delete',
      path: '/assets/buckets/:id',
      auth: 'write',
      tag,
      status: 204,
      conditional: true,
      operationId: 'deleteBucket',
      errors: [403, 409],
      summary: 'Delete an empty bucket',
      description:
        'System buckets (profil, otp-evidence, _deletion) are never deleted: 403. A bucket that still holds assets: 409.',
      handler: async ({ principal, params, ifMatch }) => {
        await buckets.delete(principal, params.id, ifMatch);
        return undefined;
      },
    },
  ];
}
