// The one Ajv instance of the service. REST request bodies and OTP frames are checked by the same
// instance because REST bodies `$ref` protocol schemas by name (a test case's steps are OTP step
// actions): one instance means one place where every named schema lives (schema-registry.ts adds
// them) and one set of options, so a body and a frame with the same mistake get the same message.
import { Ajv2020 } from 'ajv/dist/2020.js';
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
 * failures; it costs nothing on valid data.
 *
 * allErrors lists every problem, which is what a caller wants of a small body or frame; its cost
 * grows with the number of problems (200,000 bad array items made 200,000 error objects). Hostile
 * input is first checked by `ajvFirst` instead (see bounded.ts).
 */
export const ajv = new Ajv2020({ ...OPTIONS, allErrors: true });
addFormats(ajv);

/**
 * The same schemas (schema-registry.ts adds every one to both), stopping at the first problem: the
 * cost of checking any input is then bounded by its size, never by how wrong it is.
 */
export const ajvFirst = new Ajv2020({ ...OPTIONS, allErrors: false });
addFormats(ajvFirst);
