// Every named schema of the service, OTP and REST, registered once. A schema is added to the shared
// Ajv instance under its $id, so any other schema may `$ref` it by bare name ({ $ref: 'TestCaseStep' }),
// and it becomes a component of /openapi.json, where the same bare names are rewritten to
// '#/components/schemas/Name' on a copy (the registered objects are shared and never mutated).
import { ajv, ajvFirst } from './ajv.js';

/** A JSON Schema object as this project writes them: plain data, no functions. */
export type JsonSchema = Record<string, unknown>;

const byId = new Map<string, JsonSchema>();
/** Schema sets (a protocol's vocabulary), in the order they were registered. */
const setMembers: JsonSchema[] = [];
/** Single schemas (REST bodies and answers), in the order they were registered. */
const singles: JsonSchema[] = [];

function add(schema: JsonSchema, into: JsonSchema[]): boolean {
  const id = schema.$id;
  if (typeof id !== 'string' || !id) throw new Error('a registered schema needs an $id');
  const known = byId.get(id);
  if (known === schema) return false;
  if (known) throw new Error(`schema ${id} is registered twice`);
  byId.set(id, schema);
  into.push(schema);
  ajv.addSchema(schema);
  ajvFirst.addSchema(schema);
  return true;
}

/**
 * Adds a schema under its $id (PascalCase); answers a `$ref` to it (its name as a literal type, so a
 * schema that refers to it derives its type with FromSchema). Registering another schema under a used
 * id is a bug.
 */
export function registerSchema<const S extends JsonSchema>(
  schema: S,
): { $ref: S extends { $id: infer Id extends string } ? Id : string } {
  add(schema, singles);
  return { $ref: schema.$id as S extends { $id: infer Id extends string } ? Id : string };
}

/**
 * Adds a set of schemas that refer to each other by name (the OTP protocol). In /openapi.json the
 * sets come before the single schemas, so the document reads from the building blocks to the route
 * bodies whatever order the process loaded its modules in.
 */
export function registerSchemaSet(schemas: readonly JsonSchema[]): void {
  for (const schema of schemas) add(schema, setMembers);
}

/** Every name a `$ref` may use. */
export function isSchemaName(name: string): boolean {
  return byId.has(name);
}

/** A registered schema by its id, or undefined. */
export function findSchema(id: string): JsonSchema | undefined {
  return byId.get(id);
}

/** A registered schema by its id (to build a variant of it); throws for an unknown id. */
export function schemaById(id: string): JsonSchema {
  const schema = byId.get(id);
  if (!schema) throw new Error(`no schema ${id}`);
  return schema;
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

/** A deep copy of a schema for an OpenAPI 3.1 document: without its $id, bare-name `$ref`s pointing at `${prefix}Name`. */
export function toOpenApiSchema(schema: JsonSchema, prefix = '#/components/schemas/'): JsonSchema {
  return rewrite(schema, prefix, true) as JsonSchema;
}

/** components.schemas of /openapi.json: the schema sets, then every single schema. */
export function openApiComponentSchemas(prefix = '#/components/schemas/'): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const schema of [...setMembers, ...singles]) out[schema.$id as string] = toOpenApiSchema(schema, prefix);
  return out;
}
