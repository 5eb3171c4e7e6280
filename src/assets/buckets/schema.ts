// One schema per bucket resource: request validation, /openapi.json and tool input. The bodies are
// declared `as const` so that their routes' handlers get their types (BodyOf).
import type { BodyOf } from '../../rest/route.js';
import { pageSchema, registerSchema, revision, timestamps } from '../../rest/schemas.js';

const driver = {
  enum: ['fs', 's3'],
  description: 'Storage driver for assets uploaded from now on (existing assets keep theirs)',
} as const;
const maxFileBytes = {
  type: ['integer', 'null'],
  minimum: 1,
  description: 'Largest file the bucket takes, in bytes (null: only the service-wide MAX_UPLOAD_BYTES applies)',
} as const;
const allowedContentTypes = {
  type: ['array', 'null'],
  maxItems: 50,
  uniqueItems: true,
  items: {
    type: 'string',
    pattern: '^[a-z0-9][a-z0-9!#$&^_.+-]*/(\\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$',
    description: 'A content type ("image/png") or a family ("image/*")',
  },
  description: 'Content types the bucket takes (null: any)',
} as const;

const bucketCreate = {
  $id: 'BucketCreate',
  title: 'BucketCreate',
  description: 'A new bucket of the project',
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9.-]{0,62}$',
      description:
        'Unique in the project: lower-case letters, digits, dots and dashes (names with "_" are the service\'s)',
    },
    driver,
    maxFileBytes,
    allowedContentTypes,
  },
} as const;
export const BucketCreateSchema = registerSchema(bucketCreate);
export type BucketCreate = BodyOf<typeof bucketCreate>;

const bucketUpdate = {
  $id: 'BucketUpdate',
  title: 'BucketUpdate',
  description: 'Changes to a bucket (its name is fixed); null removes a limit',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { driver, maxFileBytes, allowedContentTypes },
} as const;
export const BucketUpdateSchema = registerSchema(bucketUpdate);
export type BucketUpdate = BodyOf<typeof bucketUpdate>;

export const BucketSchema = registerSchema({
  $id: 'Bucket',
  title: 'Bucket',
  description: 'A bucket of assets, with its limits and what it holds',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'projectId',
    'name',
    'system',
    'driver',
    'maxFileBytes',
    'allowedContentTypes',
    'usage',
    'version',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string', pattern: '^bkt_' },
    projectId: { type: 'string' },
    name: { type: 'string', description: 'Unique in the project; routes take it in place of the id' },
    system: {
      type: 'boolean',
      description:
        'One of the buckets every project has (profil, otp-evidence, _deletion): never deleted; only profil takes direct uploads',
    },
    driver,
    maxFileBytes,
    allowedContentTypes,
    usage: {
      type: 'object',
      additionalProperties: false,
      required: ['assets', 'bytes'],
      properties: {
        assets: { type: 'integer', minimum: 0, description: 'Assets in the bucket' },
        bytes: { type: 'integer', minimum: 0, description: 'Their total size' },
      },
    },
    version: revision,
    ...timestamps,
  },
});

export const BucketPageSchema = pageSchema('BucketPage', BucketSchema, 'A page of buckets');
