// Query strings and form fields arrive as text. They are turned into the types their schema declares
// here, by the rules of Ajv's `coerceTypes`, and then checked like any body by the one Ajv
// configuration (ajv.ts, through bounded.ts). Coercion is not an Ajv option for that reason: it is
// instance-wide, and bodies and frames must never be coerced. Defaults are filled here too (Ajv's
// `useDefaults`, also instance-wide), at the top level, where a query or a tool's arguments have them.
import { compileBounded } from './bounded.js';
import type { ValidationResult } from './field-errors.js';
import type { JsonSchema } from './schema-registry.js';

export interface TextFieldsOptions {
  /**
   * A query string: a parameter given once where the schema says array becomes a one-item array,
   * and a one-item array where it says a single value becomes that value (coerceTypes: 'array').
   */
  lists: boolean;
}

/** Checks fields read as text; `value` is the coerced fields, defaults filled. */
export type TextFieldsValidator<T = Record<string, unknown>> = (
  fields: Readonly<Record<string, unknown>>,
  prefix: string,
) => ValidationResult<T>;

// Keywords a field's schema may hold: those that check a value without holding a schema in which
// Ajv would coerce or fill in something this module does not. Anything else is refused at compile
// time, so that a query can never be read differently here than Ajv would read it.
const FIELD_KEYWORDS = new Set([
  'type',
  'items',
  'enum',
  'const',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'default',
  'description',
  'title',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
]);
const OBJECT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'description',
  'title',
  '$id',
]);

interface Field {
  types: string[];
  items?: Field;
}

function fieldOf(schema: JsonSchema, where: string): Field {
  for (const key of Object.keys(schema)) {
    if (!FIELD_KEYWORDS.has(key))
      throw new Error(`${where}: keyword "${key}" is not supported in a query or form field`);
  }
  const { type, items } = schema as { type?: string | string[]; items?: unknown };
  if (items !== undefined && (typeof items !== 'object' || items === null || Array.isArray(items))) {
    throw new Error(`${where}: items must be one schema`);
  }
  return {
    types: type === undefined ? [] : Array.isArray(type) ? type : [type],
    ...(items ? { items: fieldOf(items as JsonSchema, `${where}.items`) } : {}),
  };
}

/** Ajv's type check (strictNumbers, as ajv.ts configures it). */
function isType(type: string, v: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return typeof v === 'number' && Number.isFinite(v) && v % 1 === 0;
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return false;
  }
}

const NOT = Symbol('not coerced');

/** Text Ajv reads as a number: `data && data == +data` in its generated code (so " " is 0, "Infinity" too). */
function numeric(v: unknown): v is string {
  return typeof v === 'string' && v !== '' && !Number.isNaN(Number(v));
}

/** Scalars a query's array field wraps in a one-item array. */
const isScalar = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Ajv's coerceData for each type: `v` as that type, or NOT. */
const COERCIONS = new Map<string, (v: unknown, lists: boolean) => unknown>([
  ['string', (v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === null ? '' : NOT)],
  ['number', (v) => (typeof v === 'boolean' || v === null || numeric(v) ? Number(v) : NOT)],
  // `!(n % 1)`, as Ajv writes it: NaN % 1 is NaN, so "Infinity" is coerced too (and then refused).
  ['integer', (v) => (typeof v === 'boolean' || v === null || (numeric(v) && !(Number(v) % 1)) ? Number(v) : NOT)],
  ['boolean', (v) => (v === 'false' || v === 0 || v === null ? false : v === 'true' || v === 1 ? true : NOT)],
  ['null', (v) => (v === '' || v === 0 || v === false ? null : NOT)],
  ['array', (v, lists) => (lists && isScalar(v) ? [v] : NOT)],
]);

/** One step of Ajv's coerceData: `v` as `type`, or NOT. */
function coerceTo(type: string, v: unknown, lists: boolean): unknown {
  const coercion = COERCIONS.get(type);
  return coercion ? coercion(v, lists) : NOT;
}

/** A value as Ajv with coerceTypes would leave it: unchanged when it cannot be coerced (the check then says why). */
function coerce(field: Field, value: unknown, lists: boolean): unknown {
  let out = value;
  const { types } = field;
  if (types.length && !types.some((t) => isType(t, value))) {
    let v = value;
    let coerced: unknown = NOT;
    if (lists && Array.isArray(v) && v.length === 1) {
      v = v[0];
      if (types.some((t) => isType(t, v))) coerced = v;
    }
    for (const t of types) {
      if (coerced !== NOT) break;
      coerced = coerceTo(t, v, lists);
    }
    if (coerced !== NOT) out = coerced;
  }
  const { items } = field;
  return items && Array.isArray(out) ? out.map((item) => coerce(items, item, lists)) : out;
}

interface ObjectSchema {
  properties?: Record<string, JsonSchema>;
}

/** The object with the defaults of its schema's top-level properties filled in where absent (Ajv's useDefaults there). */
export function withDefaults(schema: JsonSchema, data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const [name, property] of Object.entries((schema as ObjectSchema).properties ?? {})) {
    if (out[name] === undefined && property.default !== undefined) out[name] = structuredClone(property.default);
  }
  return out;
}

/** The validator of an object schema of text fields (a route's query, a form's text fields). */
export function compileTextFields<T = Record<string, unknown>>(
  schema: JsonSchema,
  options: TextFieldsOptions,
): TextFieldsValidator<T> {
  for (const key of Object.keys(schema)) {
    if (!OBJECT_KEYWORDS.has(key))
      throw new Error(`keyword "${key}" is not supported in the schema of a query or form`);
  }
  if (typeof schema.additionalProperties === 'object')
    throw new Error('additionalProperties of a query or form must be true or false');
  const fields = Object.entries((schema as ObjectSchema).properties ?? {}).map(
    ([name, s]) => [name, fieldOf(s, name)] as const,
  );
  const validate = compileBounded<T>(schema);
  return (input, prefix) => {
    const data = withDefaults(schema, input);
    for (const [name, field] of fields) {
      if (data[name] !== undefined) data[name] = coerce(field, data[name], options.lists);
    }
    return validate(data, prefix);
  };
}
