// The TypeScript type of what a schema accepts, derived from the schema itself (json-schema-to-ts):
// a schema declared `as const` gives its body or query type, so the shape is written once.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * The type of a body a schema accepts, as the handler receives it. The shared ajv instance checks
 * bodies without filling in defaults, so a field with a default may still be absent.
 */
export type BodyOf<S extends JSONSchema> = FromSchema<S, { keepDefaultedPropertiesOptional: true }>;

/**
 * The type of a query a schema accepts, as the handler receives it: the query validator coerces the
 * text of the query string to the declared types and fills in defaults (`limit` is always there).
 */
export type QueryOf<S extends JSONSchema> = FromSchema<S>;
