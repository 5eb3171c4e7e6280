// The schemas of a resource, all from its definition: the create body, the update body (a JSON merge
// patch), the record, the page and the list query. Each named one is registered once, for request
// validation (the shared ajv instance) and as a component of /openapi.json.

import { listQueryProperties } from '../pagination.js';
import type { JsonSchema } from '../route.js';
import { pageSchema, registerSchema } from '../schemas.js';
import type { ResourceDefinition } from './definition.js';

export interface ResourceSchemas {
  record: { $ref: string };
  create: { $ref: string };
  update: { $ref: string };
  page: { $ref: string };
  query: JsonSchema;
  /** Fields every record has (for the record schema's `required`). */
  recordRequired: string[];
}

function withoutWriteOnly(fields: Record<string, JsonSchema>): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(fields).filter(([, s]) => !s.writeOnly));
}

function nullable(schema: JsonSchema): JsonSchema {
  const { description, default: fallback, ...rest } = schema as { description?: string; default?: unknown };
  const removes = fallback === undefined ? 'null removes it' : `null resets it to ${JSON.stringify(fallback)}`;
  return { description: `${description ?? ''}${description ? '; ' : ''}${removes}`, anyOf: [rest, { type: 'null' }] };
}

/** A query parameter that filters on a field. */
function filterParameter(name: string, field: JsonSchema): JsonSchema {
  const f = field as { type?: unknown; enum?: unknown[]; items?: JsonSchema; pattern?: string; format?: string };
  if (f.type === 'array')
    return { type: 'array', items: f.items, description: `Only items whose ${name} include all of these` };
  if (f.type === 'boolean' || f.type === 'integer' || f.type === 'number') {
    return { type: f.type, description: `Only items with this ${name}` };
  }
  const item: JsonSchema = f.enum
    ? { enum: f.enum }
    : { type: 'string', ...(f.pattern ? { pattern: f.pattern } : {}), ...(f.format ? { format: f.format } : {}) };
  return {
    type: 'array',
    items: item,
    maxItems: 50,
    description: `Only items whose ${name} is one of these (repeat the parameter for several)`,
  };
}

export function buildSchemas(def: ResourceDefinition): ResourceSchemas {
  const immutable = new Set(def.immutable ?? []);
  const system = def.system;
  const name = def.schemaName;
  const create = registerSchema({
    $id: `${name}Create`,
    title: `${name}Create`,
    description: `A new ${def.label}`,
    type: 'object',
    additionalProperties: false,
    required: def.required,
    properties: def.fields,
  });
  const updatable = Object.entries(def.fields).filter(([field]) => !immutable.has(field));
  const update = registerSchema({
    $id: `${name}Update`,
    title: `${name}Update`,
    description: `Changes to a ${def.label} (JSON merge patch): the fields given replace the stored ones; null removes an optional field`,
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: Object.fromEntries(
      updatable.map(([field, schema]) => [field, def.required.includes(field) ? schema : nullable(schema)]),
    ),
  });
  const answered = withoutWriteOnly(def.fields);
  const defaulted = Object.entries(answered)
    .filter(([, s]) => s.default !== undefined)
    .map(([f]) => f);
  const recordRequired = [
    'id',
    ...Object.keys(system),
    ...new Set([...def.required.filter((f) => f in answered), ...defaulted]),
  ];
  const record = registerSchema({
    $id: name,
    title: name,
    description: def.description,
    type: 'object',
    additionalProperties: false,
    required: recordRequired,
    properties: {
      id: {
        type: 'string',
        pattern: `^${def.idPrefix}_`,
        description: `Id of the ${def.label} (prefix ${def.idPrefix}_)`,
      },
      ...answered,
      ...(def.computed ?? {}),
      ...system,
    },
  });
  const page = pageSchema(`${name}Page`, record, `A page of ${def.label} records`);
  const filters: Record<string, JsonSchema> = {};
  for (const field of def.filters) {
    const schema = def.fields[field] ?? def.computed?.[field] ?? system[field];
    if (!schema) throw new Error(`${def.path}: filter ${field} is not a field`);
    filters[field] = filterParameter(field, schema);
  }
  const query = {
    type: 'object',
    additionalProperties: false,
    properties: { ...listQueryProperties, ...filters },
  };
  return { record, create, update, page, query, recordRequired };
}
