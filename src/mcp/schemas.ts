// Tool input schemas from the schemas REST validates with (one schema, three uses): a registered
// schema is bundled into one self-contained JSON Schema, its named `$ref`s (TestCaseStep, Locator, ...)
// gathered under `$defs`, because an MCP client sees only the tool's schema, not the service's registry.
// The bundled schema is also what checks a tool's arguments, with the one Ajv configuration of every
// door (bounded, as REST bodies are); the defaults of list queries are filled in as REST fills them.

import { compileBounded } from '../validation/bounded.js';
import type { ValidationResult } from '../validation/field-errors.js';
import { findSchema, isSchemaName, type JsonSchema, toOpenApiSchema } from '../validation/schema-registry.js';
import { withDefaults } from '../validation/text-fields.js';

const DEFS = '#/$defs/';

function refsOf(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsOf(v, into);
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string' && isSchemaName(v)) into.add(v);
      else refsOf(v, into);
    }
  }
}

/** Every registered schema `schema` refers to, directly or through others. */
function closure(schema: JsonSchema): Map<string, JsonSchema> {
  const out = new Map<string, JsonSchema>();
  const pending = new Set<string>();
  refsOf(schema, pending);
  while (pending.size) {
    const name = pending.values().next().value as string;
    pending.delete(name);
    if (out.has(name)) continue;
    const found = findSchema(name)!;
    out.set(name, found);
    const more = new Set<string>();
    refsOf(found, more);
    for (const m of more) if (!out.has(m)) pending.add(m);
  }
  return out;
}

/** A registered schema (`{ $ref: 'Name' }`) or a plain one, as one self-contained object schema. */
export function bundle(schema: JsonSchema | { $ref: string }): JsonSchema {
  const ref = (schema as { $ref?: unknown }).$ref;
  const root = typeof ref === 'string' && Object.keys(schema).length === 1 ? findSchema(ref)! : (schema as JsonSchema);
  const defs = closure(root);
  const body = toOpenApiSchema(root, DEFS);
  delete body.title;
  if (!defs.size) return body;
  return { ...body, $defs: Object.fromEntries([...defs].map(([name, s]) => [name, toOpenApiSchema(s, DEFS)])) };
}

/** An object schema: the given properties beside those of a bundled schema (its `$defs` kept at the top). */
export function withProperties(
  base: JsonSchema,
  extra: Record<string, JsonSchema>,
  required: string[] = [],
): JsonSchema {
  const properties = { ...(base.properties as Record<string, JsonSchema>), ...extra };
  const allRequired = [...((base.required as string[] | undefined) ?? []), ...required];
  return { ...base, type: 'object', properties, ...(allRequired.length ? { required: allRequired } : {}) };
}

/** An object schema of named parts, each a bundled schema; `$defs` of the parts merged at the top. */
export function objectOf(parts: Record<string, JsonSchema>, required: string[], description?: string): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  const properties: Record<string, JsonSchema> = {};
  for (const [name, part] of Object.entries(parts)) {
    const { $defs, ...rest } = part as { $defs?: Record<string, JsonSchema> };
    Object.assign(defs, $defs);
    properties[name] = rest;
  }
  return {
    type: 'object',
    additionalProperties: false,
    ...(description ? { description } : {}),
    required,
    properties,
    ...(Object.keys(defs).length ? { $defs: defs } : {}),
  };
}

/** Checks a tool's arguments (JSON, so not coerced); `value` has the top-level defaults filled in. */
export type InputValidator = (args: Record<string, unknown>) => ValidationResult<Record<string, unknown>>;

export function compileInput(schema: JsonSchema): InputValidator {
  const validate = compileBounded<Record<string, unknown>>(schema);
  return (args) => validate(withDefaults(schema, args), 'arguments');
}
