// One declarative definition per resource. From its fields come every schema the resource has
// (create body, update body, record, page, list query), registered once for ajv validation and for
// /openapi.json, and later for MCP tool input; resourceRoutes() turns it into the REST routes.
import type { Scope } from '../../auth/principal.js';
import type { JsonSchema } from '../route.js';
import { registerSchema, pageSchema, revision, timestamps } from '../schemas.js';
import { pageQueryProperties, sortQueryProperties } from '../pagination.js';

export type Data = Record<string, unknown>;

/** A record as answered: its id, its revision and its fields. */
export interface Rec {
  id: string;
  version: number;
  [field: string]: unknown;
}

export interface ResourceDefinition {
  /** Path under /api/v1 and OpenAPI tag, e.g. `bugs`, `tests/cases`, `platform/projects`. */
  path: string;
  /** PascalCase name of the record schema (`Bug`); the others are `BugCreate`, `BugUpdate`, `BugPage`. */
  schemaName: string;
  /** PascalCase plural for operation names (`listBugs`). */
  pluralName: string;
  /** For messages: `bug`, `test case`. */
  label: string;
  idPrefix: string;
  description: string;
  /** Fields a client writes. `default` applies on create; `writeOnly` fields are never answered. */
  fields: Record<string, JsonSchema>;
  /** Fields a create must give. */
  required: string[];
  /** Fields set on create and never changed afterwards. */
  immutable?: string[];
  /** Fields the service sets (answered, never written by clients). */
  computed?: Record<string, JsonSchema>;
  /** Fields the list can filter on (equality; arrays: contains all; enums and strings: any of). */
  filters: string[];
  /** Who may read and who may write; read/write unless said. */
  scopes?: { read: Scope; write: Scope };
  /** Fields every record of this store carries beyond id and fields (projectId, version, times). */
  system?: Record<string, JsonSchema>;
}

export interface ResourceSchemas {
  record: { $ref: string };
  create: { $ref: string };
  update: { $ref: string };
  page: { $ref: string };
  query: JsonSchema;
  /** Fields every record has (for the record schema's `required`). */
  recordRequired: string[];
}

export const artifactSystemFields: Record<string, JsonSchema> = {
  projectId: { type: 'string', description: 'Project the record belongs to' },
  version: revision,
  createdBy: { type: ['string', 'null'], description: 'Id of the API key that created the record (null when the service did)' },
  ...timestamps,
};

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
  if (f.type === 'array') return { type: 'array', items: f.items, description: `Only items whose ${name} include all of these` };
  if (f.type === 'boolean' || f.type === 'integer' || f.type === 'number') {
    return { type: f.type, description: `Only items with this ${name}` };
  }
  const item: JsonSchema = f.enum ? { enum: f.enum } : { type: 'string', ...(f.pattern ? { pattern: f.pattern } : {}), ...(f.format ? { format: f.format } : {}) };
  return { type: 'array', items: item, maxItems: 50, description: `Only items whose ${name} is one of these (repeat the parameter for several)` };
}

export function buildSchemas(def: ResourceDefinition): ResourceSchemas {
  const immutable = new Set(def.immutable ?? []);
  const system = def.system ?? artifactSystemFields;
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
    properties: Object.fromEntries(updatable.map(([field, schema]) => [field, def.required.includes(field) ? schema : nullable(schema)])),
  });
  const answered = withoutWriteOnly(def.fields);
  const defaulted = Object.entries(answered).filter(([, s]) => s.default !== undefined).map(([f]) => f);
  const recordRequired = ['id', ...Object.keys(system), ...new Set([...def.required.filter((f) => f in answered), ...defaulted])];
  const record = registerSchema({
    $id: name,
    title: name,
    description: def.description,
    type: 'object',
    additionalProperties: false,
    required: recordRequired,
    properties: {
      id: { type: 'string', pattern: `^${def.idPrefix}_`, description: `Id of the ${def.label} (prefix ${def.idPrefix}_)` },
      ...answered,
      ...(def.computed ?? {}),
      ...system,
    },
  });
  const page = pageSchema(`${name}Page`, record, `A page of ${def.label} records`);
  const filters: Record<string, JsonSchema> = {};
  for (const field of def.filters) {
    const schema = def.fields[field] ?? def.computed?.[field] ?? def.system?.[field];
    if (!schema) throw new Error(`${def.path}: filter ${field} is not a field`);
    filters[field] = filterParameter(field, schema);
  }
  const query = {
    type: 'object',
    additionalProperties: false,
    properties: { ...pageQueryProperties, ...sortQueryProperties, ...filters },
  };
  return { record, create, update, page, query, recordRequired };
}

/** The create input with each field's default filled in. */
export function withDefaults(def: ResourceDefinition, input: Data): Data {
  const out: Data = { ...input };
  for (const [field, schema] of Object.entries(def.fields)) {
    if (out[field] === undefined && schema.default !== undefined) out[field] = structuredClone(schema.default);
  }
  return out;
}

/** A stored record's fields with a merge patch applied: null removes a field (or resets it to its default). */
export function applyPatch(def: ResourceDefinition, stored: Data, patch: Data): Data {
  const out: Data = { ...stored };
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) {
      const fallback = def.fields[field]?.default;
      if (fallback === undefined) delete out[field];
      else out[field] = structuredClone(fallback);
    } else {
      out[field] = value;
    }
  }
  return out;
}

/** The fields of stored data that a client may see (no writeOnly ones). */
export function visibleFields(def: ResourceDefinition, data: Data): Data {
  const out: Data = {};
  for (const [field, value] of Object.entries(data)) {
    if (def.fields[field]?.writeOnly) continue;
    if (field in def.fields || (def.computed && field in def.computed)) out[field] = value;
  }
  return out;
}
