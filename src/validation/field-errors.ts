// Ajv errors turned into what a caller can act on: one `{ field, message }` per real problem, the
// field a short path (`body.steps[2].otp.locator.by`, `payload.capabilities.maxParallel`) and the
// message plain words. REST answers them as 400 VALIDATION_ERROR details.fields, the OTP session in
// E_INVALID_FRAME error frames. Nothing here knows a particular schema: discriminator values are
// read from the registered schemas, and a schema family may add its own wording for its patterns
// and members (addErrorWording; the OTP protocol does, see src/otp/protocol/error-wording.ts).
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { FieldError } from '../errors.js';
import { findSchema, type JsonSchema } from './schema-registry.js';

export type { FieldError };

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Wording a schema family gives for its own patterns and members; undefined falls through to the general wording. */
export interface ErrorWording {
  /** The message for a value that fails `pattern`. */
  pattern?(pattern: string): string | undefined;
  /** The message for `property`, not declared by `schema` (which has additionalProperties: false). */
  unknownProperty?(property: string, schema: JsonSchema | undefined): string | undefined;
}

const wordings: ErrorWording[] = [];

/** Adds wording used by every later formatErrors call (REST bodies embed protocol schemas, so it is global). */
export function addErrorWording(wording: ErrorWording): void {
  wordings.push(wording);
}

function worded<K extends keyof ErrorWording>(
  kind: K,
  ...args: Parameters<NonNullable<ErrorWording[K]>>
): string | undefined {
  for (const w of wordings) {
    const message = (w[kind] as ((...a: unknown[]) => string | undefined) | undefined)?.(...args);
    if (message !== undefined) return message;
  }
  return undefined;
}

/** Problems listed at most; the rest are counted in one last entry (see MORE_FIELD). */
export const MAX_LISTED = 20;
/** Ajv errors read at most: the wording below looks at neighbouring errors, which must stay cheap. */
const MAX_READ = 100;
const MAX_FIELD_CHARS = 200;
const MAX_MESSAGE_CHARS = 300;
/** The field of the last entry of a list cut short: its message says how many more there were. */
export const MORE_FIELD = '(more)';

/** Text cut to `max` characters, with an ellipsis when cut (a hostile key or value must not come back whole). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A value as it appears in a message: JSON for strings and objects, cut when long. */
export function quote(v: unknown): string {
  const value = typeof v === 'string' && v.length > 100 ? v.slice(0, 100) : v;
  const text = JSON.stringify(value) ?? String(value);
  return value === v ? clip(text, 120) : `${text}…`;
}

/** JSON pointer `/2/otp/locator/by` -> `steps[2].otp.locator.by` (with prefix `steps`). */
function fieldPath(prefix: string, instancePath: string, extra?: string): string {
  let out = prefix;
  if (instancePath) {
    for (const raw of instancePath.slice(1).split('/')) {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
    }
  }
  if (extra !== undefined) out += out ? `.${extra}` : extra;
  return out || '(root)';
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeMessage(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return `must be ${types.map((t) => ARTICLE[t] ?? t).join(' or ')}`;
}

/** `when kind is "text"`: the condition of an if/then, read from the if schema and the data. */
function describeCondition(ifSchema: unknown, data: unknown): string | undefined {
  if (!ifSchema || typeof ifSchema !== 'object') return undefined;
  const { properties, required } = ifSchema as { properties?: Record<string, JsonSchema>; required?: string[] };
  if (!properties || !Array.isArray(required) || required.length === 0) return undefined;
  const parts: string[] = [];
  for (const prop of required) {
    const sub = properties[prop];
    if (!sub || typeof sub !== 'object') return undefined;
    const actual = data && typeof data === 'object' ? (data as Record<string, unknown>)[prop] : undefined;
    if (actual !== undefined) parts.push(`${prop} is ${quote(actual)}`);
    else if ('const' in sub) parts.push(`${prop} is ${quote(sub.const)}`);
    else if (Array.isArray(sub.enum)) parts.push(`${prop} is ${sub.enum.map(quote).join(' or ')}`);
    else return undefined;
  }
  return `when ${parts.join(' and ')}`;
}

/** The tag values a discriminated oneOf accepts, in branch order (a `$ref` branch is read from the registry). */
function discriminatorValues(parentSchema: unknown, tag: string): string[] {
  const oneOf = (parentSchema as { oneOf?: unknown[] } | undefined)?.oneOf;
  if (!Array.isArray(oneOf)) return [];
  const values: string[] = [];
  for (const branch of oneOf) {
    const ref = (branch as { $ref?: string }).$ref;
    const schema = (ref ? findSchema(ref) : branch) as { properties?: Record<string, JsonSchema> } | undefined;
    const tagSchema = schema?.properties?.[tag];
    if (tagSchema && 'const' in tagSchema) values.push(String(tagSchema.const));
    else if (tagSchema && Array.isArray(tagSchema.enum)) values.push(...tagSchema.enum.map(String));
  }
  return values;
}

/**
 * The property names of a oneOf/anyOf whose branches each only require members (a bare
 * { required: [...] }, or validation/present.ts's form, which also names them as `true` properties),
 * else undefined.
 */
function requiredOnlyBranches(branches: unknown): string[][] | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const out: string[][] = [];
  for (const b of branches) {
    if (!b || typeof b !== 'object') return undefined;
    const { required: req, properties, ...rest } = b as { required?: unknown; properties?: unknown };
    if (Object.keys(rest).length !== 0 || !Array.isArray(req)) return undefined;
    if (properties !== undefined && !namesOnly(properties, req as string[])) return undefined;
    out.push(req as string[]);
  }
  return out;
}

/** `properties` names exactly the required members, each as `true` (no constraint of its own). */
function namesOnly(properties: unknown, required: string[]): boolean {
  if (!properties || typeof properties !== 'object') return false;
  const entries = Object.entries(properties);
  return entries.length === required.length && entries.every(([name, s]) => s === true && required.includes(name));
}

function baseMessage(e: ErrorObject): { extra?: string; message: string } {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { extra: String(p.missingProperty), message: 'is required' };
    case 'dependentRequired':
      return { extra: String(p.missingProperty), message: `is required when ${String(p.property)} is present` };
    case 'additionalProperties': {
      const prop = String(p.additionalProperty);
      return {
        extra: prop,
        message: worded('unknownProperty', prop, e.parentSchema as JsonSchema | undefined) ?? 'unknown property',
      };
    }
    case 'false schema':
      return { message: 'is not allowed' };
    case 'type':
      return { message: typeMessage(p.type) };
    case 'enum':
      return {
        message: `must be one of: ${(p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : quote(v))).join(', ')}`,
      };
    case 'const':
      return { message: `must be ${quote(p.allowedValue)}` };
    case 'pattern': {
      const pattern = String(p.pattern);
      return { message: worded('pattern', pattern) ?? `must match the pattern ${pattern}` };
    }
    case 'format':
      return {
        message:
          p.format === 'date-time'
            ? 'must be an ISO 8601 date-time with time zone, such as 2024-05-01T12:00:00Z'
            : `must be a valid ${String(p.format)}`,
      };
    case 'minLength':
      return { message: p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters long` };
    case 'maxLength':
      return { message: `must be at most ${String(p.limit)} characters long` };
    case 'minItems':
      return { message: `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}` };
    case 'maxItems':
      return { message: `must have at most ${String(p.limit)} items` };
    case 'uniqueItems':
      return { message: `must not repeat items (items ${String(p.j)} and ${String(p.i)} are equal)` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { message: `must be ${String(p.comparison)} ${String(p.limit)}` };
    default:
      return { message: e.message ?? `fails ${e.keyword}` };
  }
}

/** What the first reading of the errors decided: errors dropped, conditions appended, errors replaced. */
interface Rewrites {
  skip: Set<number>;
  suffix: Map<number, string>;
  replaced: Map<number, FieldError>;
}

/**
 * Turn ajv errors into `{ field, message }` pairs, one per real problem:
 * - paths are `a.b[2].c` under `prefix` (`(root)` for the value itself);
 * - a required or unknown property names the property itself (`payload.executor`: is required);
 * - an unknown discriminator tag gives one message (`unknown action "clik"; expected one of ...`);
 * - a oneOf/anyOf of bare `required` branches gives one message (`must have exactly one of: ...`);
 * - if/then failures say their condition (`is required when kind is "text"`), and the bare
 *   `must match "then" schema` errors are dropped.
 */
export function formatErrors(all: readonly ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  if (!all || all.length === 0) return [];
  const errors = all.length > MAX_READ ? all.slice(0, MAX_READ) : all;
  const rewrites: Rewrites = { skip: new Set(), suffix: new Map(), replaced: new Map() };
  for (let i = 0; i < errors.length; i++) {
    const keyword = errors[i]!.keyword;
    if (keyword === 'if') conditionOfIf(errors, i, rewrites);
    else if (keyword === 'discriminator') rewriteDiscriminator(errors, i, prefix, rewrites);
    else if (keyword === 'oneOf' || keyword === 'anyOf') rewriteRequiredBranches(errors, i, prefix, rewrites);
  }
  return capped(distinctFieldErrors(errors, prefix, rewrites), all.length - errors.length);
}

/** An if error: dropped, and its condition appended to the errors of the branch that failed. */
function conditionOfIf(errors: readonly ErrorObject[], i: number, { skip, suffix }: Rewrites): void {
  const e = errors[i]!;
  skip.add(i);
  const base = e.schemaPath.slice(0, -'if'.length);
  const branch = `${base}${String((e.params as { failingKeyword?: string }).failingKeyword ?? 'then')}/`;
  const cond = describeCondition((e.parentSchema as { if?: unknown } | undefined)?.if, e.data);
  // The branch's own errors come right before the if error.
  for (let j = i - 1; j >= 0; j--) {
    const sub = errors[j]!;
    if (!sub.schemaPath.startsWith(branch) || !sub.instancePath.startsWith(e.instancePath)) break;
    if (cond && !suffix.has(j)) suffix.set(j, cond);
  }
}

/** A discriminator error: one message naming the tag values, in place of the tag's `required` error. */
function rewriteDiscriminator(errors: readonly ErrorObject[], i: number, prefix: string, rw: Rewrites): void {
  const e = errors[i]!;
  const p = e.params as { error?: string; tag?: string; tagValue?: unknown };
  const tag = String(p.tag);
  const values = discriminatorValues(e.parentSchema, tag).join(', ');
  const message =
    p.error === 'mapping'
      ? `unknown ${tag} ${quote(p.tagValue)}; expected one of ${values}`
      : p.tagValue === undefined
        ? `is required; expected one of ${values}`
        : `must be a string; expected one of ${values}`;
  rw.replaced.set(i, { field: fieldPath(prefix, e.instancePath, tag), message });
  // The tag's own `required` error says the same thing.
  for (let j = 0; j < errors.length; j++) {
    const o = errors[j]!;
    const missing = (o.params as { missingProperty?: string }).missingProperty;
    if (o.keyword === 'required' && o.instancePath === e.instancePath && missing === tag) rw.skip.add(j);
  }
}

/** A oneOf/anyOf of bare `required` branches: one message, in place of its branches' errors. */
function rewriteRequiredBranches(errors: readonly ErrorObject[], i: number, prefix: string, rw: Rewrites): void {
  const e = errors[i]!;
  const branches = requiredOnlyBranches(e.schema);
  if (!branches) return;
  const names = branches.map((b) => b.join(' + '));
  const passing = (e.params as { passingSchemas?: number[] | null }).passingSchemas;
  let message: string;
  if (e.keyword === 'anyOf') message = `must have at least one of: ${names.join(', ')}`;
  else if (Array.isArray(passing))
    message = `must have only one of: ${names.join(', ')} (found ${passing.map((k) => names[k]).join(', ')})`;
  else message = `must have exactly one of: ${names.join(', ')}`;
  rw.replaced.set(i, { field: fieldPath(prefix, e.instancePath), message });
  const branchPrefix = `${e.schemaPath}/`;
  for (let j = 0; j < i; j++) {
    const o = errors[j]!;
    if (o.instancePath === e.instancePath && o.schemaPath.startsWith(branchPrefix)) rw.skip.add(j);
  }
}

/** The errors not dropped, each worded (or as replaced), the same field and message once. */
function distinctFieldErrors(errors: readonly ErrorObject[], prefix: string, rw: Rewrites): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < errors.length; i++) {
    if (rw.skip.has(i)) continue;
    const fe = rw.replaced.get(i) ?? wordedError(errors[i]!, prefix, rw.suffix.get(i));
    const key = `${fe.field}\u0000${fe.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}

/** One ajv error in plain words, with the condition under which it applies. */
function wordedError(e: ErrorObject, prefix: string, cond: string | undefined): FieldError {
  const { extra, message } = baseMessage(e);
  return { field: fieldPath(prefix, e.instancePath, extra), message: cond ? `${message} ${cond}` : message };
}

/** At most MAX_LISTED entries with bounded text; a last MORE_FIELD entry says what was left out. */
function capped(list: FieldError[], unread: number): FieldError[] {
  const shown = list
    .slice(0, MAX_LISTED)
    .map((e) => ({ field: clip(e.field, MAX_FIELD_CHARS), message: clip(e.message, MAX_MESSAGE_CHARS) }));
  const more = list.length - shown.length + unread;
  if (more > 0) {
    shown.push({ field: MORE_FIELD, message: `${more} more problem${more === 1 ? '' : 's'} not listed` });
  }
  return shown;
}
