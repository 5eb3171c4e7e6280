import type { RouteDef } from '../../rest/route.js';
import { pageQueryProperties } from '../../rest/pagination.js';
import type { BucketService } from './bucket-service.js';
import { bucketCreateSchema, bucketPatchSchema } from './schema.js';

export function bucketRoutes(buckets: BucketService): RouteDef[] {
  const tag = 'assets';
  return [
    {
      method: 'get', path: '/assets/buckets', auth: 'read', tag,
      query: { type: 'object', properties: pageQueryProperties },
      summary: 'Buckets of the project (system buckets profil, otp-evidence and _deletion included), with their usage',
      handler: ({ principal, query }) => buckets.list(principal, query),
    },
    {
      method: 'post', path: '/assets/buckets', auth: 'write', tag, status: 201, body: bucketCreateSchema,
      summary: 'Create a bucket, optionally with its driver, size limit and allowed content types',
      handler: ({ principal, body }) => buckets.create(principal, body),
    },
    {
      method: 'get', path: '/assets/buckets/:id', auth: 'read', tag,
      summary: 'A bucket, by id or by name',
      handler: ({ principal, params }) => buckets.read(principal, params.id),
    },
    {
      method: 'patch', path: '/assets/buckets/:id', auth: 'write', tag, body: bucketPatchSchema,
      summary: 'Change a bucket\'s driver (for new assets), size limit or allowed content types',
      handler: ({ principal, params, body }) => buckets.update(principal, params.id, body),
    },
    {
      method: 'delete', path: '/assets/buckets/:id', auth: 'write', tag,
      summary: 'Delete an empty bucket; system buckets cannot be deleted (403), non-empty ones answer 409',
      handler: ({ principal, params }) => buckets.delete(principal, params.id),
    },
  ];
}
