// All OTP schemas in one list, registered once in the shared schema registry (src/validation/) when
// this module loads: the frame validators (../validators.ts) compile them from there, REST bodies
// `$ref` them by name (a test case's steps), and /openapi.json lists them as components.

import { addErrorWording } from '../../../validation/field-errors.js';
import { type JsonSchema, registerSchemaSet, toOpenApiSchema } from '../../../validation/schema-registry.js';
import { otpErrorWording } from '../error-wording.js';
import { stepSchemas } from './actions.js';
import { locatorSchemas } from './locator.js';
import { messageSchemas } from './messages.js';

export * from './actions.js';
export * from './ids.js';
export * from './locator.js';
export * from './messages.js';
export * from './payloads.js';
export * from './step-vocabulary.js';

/** Every OTP schema, each with a unique PascalCase $id. */
export const otpSchemas: readonly JsonSchema[] = [...locatorSchemas, ...stepSchemas, ...messageSchemas];

/** Schema id -> schema object. */
export const otpSchemasById: ReadonlyMap<string, JsonSchema> = new Map(otpSchemas.map((s) => [s.$id as string, s]));

registerSchemaSet(otpSchemas);
addErrorWording(otpErrorWording);

/**
 * Deep copies of the OTP schemas for an OpenAPI 3.1 document: keyed by id, without $id, and with
 * { $ref: 'Name' } rewritten to `${refPrefix}Name` (the one rewrite of the schema registry).
 */
export function toOpenApiComponents(refPrefix = '#/components/schemas/'): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  for (const schema of otpSchemas) components[schema.$id as string] = toOpenApiSchema(schema, refPrefix);
  return components;
}
