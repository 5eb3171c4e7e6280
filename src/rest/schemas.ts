// The REST schemas every route shares (error bodies, pages, timestamps, revisions), on the one schema
// registry of src/validation/: a registered schema validates bodies, may `$ref` any other by bare name
// (REST and OTP alike, e.g. { $ref: 'TestCaseStep' }) and becomes a component of /openapi.json.

import { ErrorCode } from '../errors.js';
import { type JsonSchema, registerSchema } from '../validation/schema-registry.js';

// Route modules register their own schemas through here; the registry itself is src/validation/.
export { registerSchema, schemaById } from '../validation/schema-registry.js';

// ---- schemas every route shares ------------------------------------------------------------------

const errorObject = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message', 'details'],
  properties: {
    code: {
      type: 'string',
      description: `Machine-readable code; the list is open-ended. Known: ${Object.values(ErrorCode).join(', ')}`,
    },
    message: { type: 'string', description: 'What went wrong, for people' },
    details: {
      type: 'object',
      description: 'Structured detail; VALIDATION_ERROR lists every failing field in `fields`',
      properties: {
        fields: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['field', 'message'],
            properties: {
              field: { type: 'string', description: 'Where, e.g. body.steps[2].otp.locator.by or query.limit' },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

export const ErrorBodySchema = registerSchema({
  $id: 'ErrorBody',
  title: 'ErrorBody',
  description: 'The body of every non-2xx answer',
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  properties: { error: errorObject },
});

export const QuotaExceededBodySchema = registerSchema({
  $id: 'QuotaExceededBody',
  title: 'QuotaExceededBody',
  description: 'HTTP 402: the artifact or storage quota of the tier is used up; nothing was written',
  type: 'object',
  additionalProperties: false,
  required: ['error', 'upgradeUrl'],
  properties: {
    error: errorObject,
    upgradeUrl: { type: 'string', format: 'uri', description: 'Where to raise the quota' },
  },
});

export const timestamps = {
  createdAt: { type: 'string', format: 'date-time', description: 'When the record was created' },
  updatedAt: { type: 'string', format: 'date-time', description: 'When the record last changed' },
};

export const revision = {
  type: 'integer',
  minimum: 1,
  description: 'Revision of the record, raised by every change; the ETag is this number in quotes',
};

/** A `{ items, nextCursor }` page of the named schema. */
export function pageSchema(id: string, itemRef: { $ref: string } | JsonSchema, description: string): { $ref: string } {
  return registerSchema({
    $id: id,
    title: id,
    description,
    type: 'object',
    additionalProperties: false,
    required: ['items', 'nextCursor'],
    properties: {
      items: { type: 'array', items: itemRef },
      nextCursor: {
        type: ['string', 'null'],
        description: 'Give as `cursor` to read the next page; null on the last page',
      },
    },
  });
}
