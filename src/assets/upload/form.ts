// Text fields of a multipart form, checked against the form's schema (the same schema documents
// the route). Values arrive as text and are coerced to the declared types (validation/text-fields.ts).

import { errors } from '../../errors.js';
import { compileTextFields } from '../../validation/text-fields.js';
import { FILE_FIELD } from './receive.js';

/**
 * The schema of a form's file part. OpenAPI 3.1 describes raw bytes with contentMediaType;
 * `format: binary` stays for generators that still read the 3.0 way. Never validated here: the
 * file streams to storage (receive.ts), and formSpec checks only the text fields.
 */
export const filePart = (description: string) => ({
  type: 'string',
  contentMediaType: 'application/octet-stream',
  format: 'binary',
  description,
});

export interface FormSpec {
  /** Names of the text fields (everything but the file). */
  fieldNames: string[];
  /** Checks and coerces the text fields; throws VALIDATION_ERROR naming each bad field. */
  parse(fields: Record<string, string>): Record<string, unknown>;
}

export function formSpec(schema: { properties: Record<string, unknown>; required?: string[] }): FormSpec {
  const fieldNames = Object.keys(schema.properties).filter((name) => name !== FILE_FIELD);
  const validate = compileTextFields(
    {
      ...schema,
      properties: Object.fromEntries(
        fieldNames.map((name) => [name, schema.properties[name] as Record<string, unknown>]),
      ),
      required: (schema.required ?? []).filter((name) => name !== FILE_FIELD),
    },
    { lists: false },
  );
  return {
    fieldNames,
    parse(fields) {
      const checked = validate(fields, 'body');
      if (!checked.ok) throw errors.validation('Invalid form fields', checked.errors);
      return checked.value;
    },
  };
}
