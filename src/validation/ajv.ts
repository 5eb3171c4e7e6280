// The one Ajv configuration of the service, and the only module that makes Ajv instances. Every door
// checks with it: REST bodies, queries and form fields (text-fields.ts coerces their text first), OTP
// frames and MCP tool arguments. REST bodies `$ref` protocol schemas by name (a test case's steps are
// OTP step actions): one configuration means one place where every named schema lives
// (schema-registry.ts adds them), one set of formats and options, so a body, a query, a frame and a
// tool call with the same mistake get the same message.
//
// It is two instances because `allErrors` is instance-wide in Ajv (it shapes the compiled code): the
// first-problem one bounds the cost of hostile input, the all-problems one lists every problem of a
// small one (bounded.ts; docs/decisions.md, "One Ajv configuration"). Both are made by `configured()`
// from the same options and formats and hold the same registered schemas.
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import formatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `default`
// is the plugin (at run time the module object is the plugin too).
type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

const OPTIONS = {
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  discriminator: true,
  verbose: true,
} as const;

/**
 * strictRequired is off because conditional `required` (if/then, oneOf branches) names properties
 * declared by the enclosing schema, which that check cannot see. verbose keeps the failing schema on
 * each error, which formatErrors (field-errors.ts) reads to explain discriminator, oneOf and if/then
 * failures; it costs nothing on valid data. No coerceTypes and no useDefaults: they too are
 * instance-wide, and a body or a frame is checked as it was sent (text-fields.ts does both for text).
 */
function configured(allErrors: boolean): Ajv2020 {
  const instance = new Ajv2020({ ...OPTIONS, allErrors });
  addFormats(instance);
  return instance;
}

/**
 * Lists every problem, which is what a caller wants of a small body or frame; its cost grows with the
 * number of problems (200,000 bad array items made 200,000 error objects). Hostile input is first
 * checked by `ajvFirst` instead (see bounded.ts).
 */
export const ajv = configured(true);

/**
 * The same schemas (schema-registry.ts adds every one to both), stopping at the first problem: the
 * cost of checking any input is then bounded by its size, never by how wrong it is.
 */
export const ajvFirst = configured(false);

// ajv's standalone module is CommonJS too: its default export is the function.
type StandaloneCode = (ajv: Ajv2020, exported: Record<string, string>) => string;
const standaloneCode: StandaloneCode =
  (standaloneModule as unknown as { default?: StandaloneCode }).default ??
  (standaloneModule as unknown as StandaloneCode);

/**
 * The first-problem validators of `schemas` as the source of an ES module, compiled ahead of time: for
 * a place that may not compile code at run time (the browser extension's worker forbids eval and new
 * Function). The same options and formats as the service's instances, from the same schema objects;
 * `exported` maps each export's name to the $id it validates.
 */
export function standaloneValidators(
  schemas: readonly Record<string, unknown>[],
  exported: Record<string, string>,
): string {
  const instance = new Ajv2020({ ...OPTIONS, allErrors: false, code: { source: true, esm: true } });
  addFormats(instance);
  for (const schema of schemas) instance.addSchema(schema);
  return standaloneCode(instance, exported);
}
