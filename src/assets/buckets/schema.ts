// One schema per bucket resource: request validation, /openapi.json and tool input.
const driver = { enum: ['fs', 's3'], description: 'Storage driver for assets uploaded from now on (existing assets keep theirs)' };
const maxFileBytes = {
  type: ['integer', 'null'],
  minimum: 1,
  description: 'Largest file the bucket takes, in bytes (null: only the service-wide MAX_UPLOAD_BYTES applies)',
};
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
};

export const bucketCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: {
      type: 'string',
      pattern: '^[a-z0-9][a-z0-9.-]{0,62}$',
      description: 'Unique in the project: lower-case letters, digits, dots and dashes (names with "_" are the service\'s)',
    },
    driver,
    maxFileBytes,
    allowedContentTypes,
  },
};

export const bucketPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { driver, maxFileBytes, allowedContentTypes },
};
