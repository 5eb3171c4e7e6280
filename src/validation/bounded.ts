// Validation whose cost is bounded by the size of the input, never by how wrong it is. Ajv with
// allErrors makes one error object per problem (a frame of 200,000 bad array items made 200,000, and
// reading them took seconds); the first-problem validator stops at once. Input is checked by the
// first-problem validator; only when it fails and the input is small is the all-problems validator
// run to list every problem (formatErrors caps the list in any case).
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ajv, ajvFirst } from './ajv.js';
import { formatErrors, type ValidationResult } from './field-errors.js';
import type { JsonSchema } from './schema-registry.js';

/** Values (objects, arrays, scalars, keys counted as values) up to which every problem is listed. */
export const SMALL_INPUT_VALUES = 2_000;
/** The same, for a caller who knows the size of the JSON text (cheaper than counting values). */
export const SMALL_INPUT_BYTES = 16 * 1024;

/** True when `value` holds at most `limit` values; stops counting past the limit. */
export function isSmall(value: unknown, limit = SMALL_INPUT_VALUES): boolean {
  const stack: unknown[] = [value];
  let count = 0;
  while (stack.length) {
    const v = stack.pop();
    if (++count > limit) return false;
    if (v === null || typeof v !== 'object') continue;
    count = pushMembers(v, stack, count, limit);
    if (count > limit) return false;
  }
  return true;
}

/** Pushes the members of `v` onto `stack`; returns the count with them, past `limit` once it is reached. */
function pushMembers(v: object, stack: unknown[], count: number, limit: number): number {
  if (Array.isArray(v)) {
    if (count + v.length > limit) return limit + 1;
    for (const item of v) stack.push(item);
    return count;
  }
  // Each key counts as a value too (an unknown property is a problem of its own). for-in stops
  // early; Object.values would copy every member of a huge object first.
  for (const key in v) {
    if (++count > limit) return count;
    stack.push((v as Record<string, unknown>)[key]);
  }
  return count;
}

/** A pair of compiled validators of one schema: the first-problem one and the all-problems one. */
/** `textLength`: the length of the JSON text `data` was parsed from, when known. */
export type BoundedValidator<T = unknown> = (
  data: unknown,
  prefix?: string,
  textLength?: number,
) => ValidationResult<T>;

/** Checks `data`: cheap when valid, every problem listed when small, the first problem otherwise. */
export function boundedValidator<T = unknown>(first: ValidateFunction, all: ValidateFunction): BoundedValidator<T> {
  return (data, prefix = '', textLength) => {
    if (first(data)) return { ok: true, value: data as T };
    if (textLength !== undefined ? textLength <= SMALL_INPUT_BYTES : isSmall(data)) {
      // The same schema: it fails here too, with every problem.
      if (!all(data)) return { ok: false, errors: formatErrors(all.errors, prefix) };
    }
    // Large input: its first problem only (it may have others; docs/decisions.md).
    return { ok: false, errors: formatErrors(first.errors, prefix) };
  };
}

/** The bounded validator of a registered schema id (both instances hold every registered schema). */
export function boundedValidatorOf<T = unknown>(schemaId: string): BoundedValidator<T> {
  const first = ajvFirst.getSchema(schemaId);
  const all = ajv.getSchema(schemaId);
  if (!first || !all) throw new Error(`schema ${schemaId} did not compile`);
  return boundedValidator<T>(first as ValidateFunction, all as ValidateFunction);
}

/** The bounded validator of a schema object (a route's body), compiled on both instances. */
export function compileBounded<T = unknown>(schema: JsonSchema): BoundedValidator<T> {
  return boundedValidator<T>(ajvFirst.compile(schema), ajv.compile(schema));
}
