// All OTP schemas in one list. validators.ts adds them to its Ajv instance; the OpenAPI document
// takes them through toOpenApiComponents(), which rewrites { $ref: 'Name' } to
// '#/components/schemas/Name' on a copy (the objects here are shared and never mutated).
import { locatorSchemas } from './locator.js';
import type { JsonSchema } from './locator.js';
import { stepSchemas } from './actions.js';
import { messageSchemas } from './messages.js';

export * from './locator.js';
export * from './actions.js';
export * from './messages.js';

/** Every OTP schema, each with a unique PascalCase $id. */
export const otpSchemas: readonly JsonSchema[] = [...locatorSchemas, ...stepSchemas, ...messageSchemas];

/** Schema id -> schema object. */
export const otpSchemasById: ReadonlyMap<string, JsonSchema> = new Map(otpSchemas.map((s) => [s.$id as string, s]));

function rewrite(value: unknown, refPrefix: string, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, refPrefix, false));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$id' && top) continue;
    if (key === '$ref' && typeof v === 'string' && otpSchemasById.has(v)) out[key] = refPrefix + v;
    else out[key] = rewrite(v, refPrefix, false);
  }
  return out;
}

/**
 * Deep copies of the OTP schemas for an OpenAPI 3.1 document: keyed by id, without $id, and with
 * { $ref: 'Name' } rewritten to `${refPrefix}Name`.
 */
export function toOpenApiComponents(refPrefix = '#/components/schemas/'): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  for (const schema of otpSchemas) components[schema.$id as string] = rewrite(schema, refPrefix, true) as JsonSchema;
  return components;
}
