// Named REST schemas. Each is added once to the shared Ajv instance (so bodies validate and may
// `$ref` each other and the OTP schemas by bare name, e.g. { $ref: 'TestCaseStep' }) and becomes a
// component of /openapi.json. One schema, every use.
import { ajv } from '../otp/protocol/validators.js';
import { otpSchemasById, toOpenApiComponents } from '../otp/protocol/schemas/index.js';
import { ErrorCode } from '../errors.js';
import type { JsonSchema } from './route.js';

const registered = new Map<string, JsonSchema>();

/** Adds a schema under its $id (PascalCase); answers a `$ref` to it. Registering the same id twice is a bug. */
export function registerSchema(schema: JsonSchema): { $ref: string } {
  const id = schema.$id as string;
  if (!id) throw new Error('a registered schema needs an $id');
  if (registered.has(id) || otpSchemasById.has(id)) {
    if (registered.get(id) === schema) return { $ref: id };
    throw new Error(`schema ${id} is registered twice`);
  }
  registered.set(id, schema);
  ajv.addSchema(schema);
  return { $ref: id };
}

/** A registered schema by its id (to build a variant of it). */
export function schemaById(id: string): JsonSchema {
  const schema = registered.get(id);
  if (!schema) throw new Error(`no schema ${id}`);
  return schema;
}

export const ref = (id: string): { $ref: string } => ({ $ref: id });

/** Every name a `$ref` may use: the OTP schemas and the registered REST schemas. */
export function isSchemaName(name: string): boolean {
  return registered.has(name) || otpSchemasById.has(name);
}

function rewrite(value: unknown, prefix: string, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, prefix, false));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$id' && top) continue;
    if (key === '$ref' && typeof v === 'string' && isSchemaName(v)) out[key] = prefix + v;
    else out[key] = rewrite(v, prefix, false);
  }
  return out;
}

/** A copy of any schema with bare-name `$ref`s pointing at OpenAPI components. */
export function toOpenApiSchema(schema: JsonSchema, prefix = '#/components/schemas/'): JsonSchema {
  return rewrite(schema, prefix, true) as JsonSchema;
}

/** components.schemas of /openapi.json: the OTP schemas and every registered REST schema. */
export function openApiComponentSchemas(prefix = '#/components/schemas/'): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = toOpenApiComponents(prefix);
  for (const [id, schema] of registered) out[id] = toOpenApiSchema(schema, prefix);
  return out;
}

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
