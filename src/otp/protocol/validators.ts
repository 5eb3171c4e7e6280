// One Ajv instance for the OTP schemas. Every schema is added once and compiled once, when this module
// is loaded; a frame is checked by looking its type up in a Map and calling the compiled function
// (no per-frame compilation, no copy of the frame). formatErrors turns ajv errors into short field
// paths and plain messages for error frames and 400 VALIDATION_ERROR details.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import type { StepAction } from '../../../machines/types.js';
import {
  ACTION_NAMES,
  EnvelopeSchema,
  INBOUND_TYPES,
  MESSAGE_TYPES,
  OTP_VERSION_PATTERN,
  OUTBOUND_TYPES,
  inboundMessageSchemas,
  otpSchemas,
  otpSchemasById,
  outboundMessageSchemas,
} from './schemas/index.js';
import type { InboundMessage, InboundType, JsonSchema, OutboundMessage, OutboundType, TestCaseStep } from './schemas/index.js';

export { MESSAGE_TYPES, INBOUND_TYPES, OUTBOUND_TYPES, inboundMessageSchemas, outboundMessageSchemas, otpSchemas };

/** One failing field: a path such as `payload.capabilities.maxParallel` or `steps[2].otp.locator.by`. */
export interface FieldError {
  field: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

// ajv-formats is CommonJS: under NodeNext its default import is the module object, whose `default`
// is the plugin (at run time the module object is the plugin too).
type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

/**
 * The shared instance. strictRequired is off because conditional `required` (if/then, oneOf
 * branches) names properties declared by the enclosing schema, which that check cannot see.
 * verbose keeps the failing schema on each error, which formatErrors reads to explain
 * discriminator, oneOf and if/then failures; it costs nothing on valid data.
 */
export const otpAjv = new Ajv2020({
  allErrors: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  discriminator: true,
  verbose: true,
});
addFormats(otpAjv);
/** The same instance under its short name, for REST body schemas that $ref the OTP ones. */
export const ajv = otpAjv;
for (const schema of otpSchemas) otpAjv.addSchema(schema);

const compiled = new Map<string, ValidateFunction>();
for (const schema of otpSchemas) {
  const id = schema.$id as string;
  const fn = otpAjv.getSchema(id);
  if (!fn) throw new Error(`OTP schema ${id} did not compile`);
  compiled.set(id, fn);
}

function compiledFor(schemaId: string): ValidateFunction {
  const fn = compiled.get(schemaId);
  if (!fn) throw new Error(`unknown OTP schema id: ${schemaId}`);
  return fn;
}

const inboundValidators = new Map<string, ValidateFunction>(
  INBOUND_TYPES.map((t) => [t, compiledFor(inboundMessageSchemas[t])]),
);
const outboundValidators = new Map<string, ValidateFunction>(
  OUTBOUND_TYPES.map((t) => [t, compiledFor(outboundMessageSchemas[t])]),
);
const messageTypeSet: ReadonlySet<string> = new Set(MESSAGE_TYPES);
const ENVELOPE_FIELDS: ReadonlySet<string> = new Set(Object.keys((EnvelopeSchema as { properties: object }).properties));

// ---------------------------------------------------------------------------------------------
// Error formatting

function quote(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
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

function patternMessage(pattern: string): string {
  if (pattern === OTP_VERSION_PATTERN) return 'must be a version major.minor, such as "1.0"';
  const id = /^\^([a-z]+_)\[A-Za-z0-9_-\]\{1,(\d+)\}\$$/.exec(pattern);
  if (id) return `must be an id: "${id[1]}" followed by 1 to ${id[2]} letters, digits, _ or -`;
  return `must match the pattern ${pattern}`;
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

/** The tag values a discriminated oneOf accepts, in branch order. */
function discriminatorValues(parentSchema: unknown, tag: string): string[] {
  const oneOf = (parentSchema as { oneOf?: unknown[] } | undefined)?.oneOf;
  if (!Array.isArray(oneOf)) return tag === 'action' ? [...ACTION_NAMES] : [];
  const values: string[] = [];
  for (const branch of oneOf) {
    const ref = (branch as { $ref?: string }).$ref;
    const schema = (ref ? otpSchemasById.get(ref) : branch) as { properties?: Record<string, JsonSchema> } | undefined;
    const tagSchema = schema?.properties?.[tag];
    if (tagSchema && 'const' in tagSchema) values.push(String(tagSchema.const));
    else if (tagSchema && Array.isArray(tagSchema.enum)) values.push(...tagSchema.enum.map(String));
  }
  return values;
}

/** The property names of a oneOf/anyOf whose branches are each a bare { required: [...] }, else undefined. */
function requiredOnlyBranches(branches: unknown): string[][] | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const out: string[][] = [];
  for (const b of branches) {
    if (!b || typeof b !== 'object') return undefined;
    const keys = Object.keys(b);
    const req = (b as { required?: unknown }).required;
    if (keys.length !== 1 || !Array.isArray(req)) return undefined;
    out.push(req as string[]);
  }
  return out;
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
      // An envelope member that this message type does not carry (sessionId on hello, runId on pong).
      const frameType = (e.parentSchema as { properties?: { type?: { const?: unknown } } } | undefined)?.properties?.type?.const;
      if (typeof frameType === 'string' && ENVELOPE_FIELDS.has(prop)) {
        return { extra: prop, message: `is not allowed in a ${frameType} frame` };
      }
      return { extra: prop, message: 'unknown property' };
    }
    case 'false schema':
      return { message: 'is not allowed' };
    case 'type':
      return { message: typeMessage(p.type) };
    case 'enum':
      return { message: `must be one of: ${(p.allowedValues as unknown[]).map((v) => (typeof v === 'string' ? v : quote(v))).join(', ')}` };
    case 'const':
      return { message: `must be ${quote(p.allowedValue)}` };
    case 'pattern':
      return { message: patternMessage(String(p.pattern)) };
    case 'format':
      return {
        message: p.format === 'date-time' ? 'must be an ISO 8601 date-time with time zone, such as 2024-05-01T12:00:00Z' : `must be a valid ${String(p.format)}`,
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

/**
 * Turn ajv errors into `{ field, message }` pairs, one per real problem:
 * - paths are `a.b[2].c` under `prefix` (`(root)` for the value itself);
 * - a required or unknown property names the property itself (`payload.executor`: is required);
 * - an unknown discriminator tag gives one message (`unknown action "clik"; expected one of ...`);
 * - a oneOf/anyOf of bare `required` branches gives one message (`must have exactly one of: ...`);
 * - if/then failures say their condition (`is required when kind is "text"`), and the bare
 *   `must match "then" schema` errors are dropped.
 */
export function formatErrors(errors: readonly ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  if (!errors || errors.length === 0) return [];
  const skip = new Set<number>();
  const suffix = new Map<number, string>();
  const replaced = new Map<number, FieldError>();

  for (let i = 0; i < errors.length; i++) {
    const e = errors[i]!;
    if (e.keyword === 'if') {
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
    } else if (e.keyword === 'discriminator') {
      const p = e.params as { error?: string; tag?: string; tagValue?: unknown };
      const tag = String(p.tag);
      const values = discriminatorValues(e.parentSchema, tag).join(', ');
      const message =
        p.error === 'mapping'
          ? `unknown ${tag} ${quote(p.tagValue)}; expected one of ${values}`
          : p.tagValue === undefined
            ? `is required; expected one of ${values}`
            : `must be a string; expected one of ${values}`;
      replaced.set(i, { field: fieldPath(prefix, e.instancePath, tag), message });
      // The tag's own `required` error says the same thing.
      for (let j = 0; j < errors.length; j++) {
        const o = errors[j]!;
        if (o.keyword === 'required' && o.instancePath === e.instancePath && (o.params as { missingProperty?: string }).missingProperty === tag) {
          skip.add(j);
        }
      }
    } else if (e.keyword === 'oneOf' || e.keyword === 'anyOf') {
      const branches = requiredOnlyBranches(e.schema);
      if (!branches) continue;
      const names = branches.map((b) => b.join(' + '));
      let message: string;
      const passing = (e.params as { passingSchemas?: number[] | null }).passingSchemas;
      if (e.keyword === 'anyOf') message = `must have at least one of: ${names.join(', ')}`;
      else if (Array.isArray(passing)) message = `must have only one of: ${names.join(', ')} (found ${passing.map((k) => names[k]).join(', ')})`;
      else message = `must have exactly one of: ${names.join(', ')}`;
      replaced.set(i, { field: fieldPath(prefix, e.instancePath), message });
      const branchPrefix = `${e.schemaPath}/`;
      for (let j = 0; j < i; j++) {
        const o = errors[j]!;
        if (o.instancePath === e.instancePath && o.schemaPath.startsWith(branchPrefix)) skip.add(j);
      }
    }
  }

  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < errors.length; i++) {
    if (skip.has(i)) continue;
    const e = errors[i]!;
    let fe = replaced.get(i);
    if (!fe) {
      const { extra, message } = baseMessage(e);
      const cond = suffix.get(i);
      fe = { field: fieldPath(prefix, e.instancePath, extra), message: cond ? `${message} ${cond}` : message };
    }
    const key = `${fe.field}\u0000${fe.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Validators

function run<T>(fn: ValidateFunction, data: unknown, prefix: string): ValidationResult<T> {
  if (fn(data)) return { ok: true, value: data as T };
  return { ok: false, errors: formatErrors(fn.errors, prefix) };
}

/**
 * A checker for one OTP schema id (`Locator`, `StepAction`, `HelloPayload`, ...), compiled at load.
 * `prefix` starts the field paths of its errors. Throws for an unknown id.
 */
export function validatorFor<T = unknown>(schemaId: string): (data: unknown, prefix?: string) => ValidationResult<T> {
  const fn = compiledFor(schemaId);
  return (data, prefix = '') => run<T>(fn, data, prefix);
}

export type InboundResult = { ok: true; message: InboundMessage } | { ok: false; errors: FieldError[] };
export type OutboundResult = { ok: true; message: OutboundMessage } | { ok: false; errors: FieldError[] };

/** Why a frame has no validator in this direction: not an object, or no/unknown/wrong-way type. */
function typeProblem(frame: unknown, direction: readonly string[], sentBy: string, otherSide: string): FieldError[] {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) {
    return [{ field: '(root)', message: 'frame must be a JSON object' }];
  }
  const type = (frame as { type?: unknown }).type;
  const expected = `expected one of ${direction.join(', ')}`;
  if (type === undefined) return [{ field: 'type', message: `is required; ${expected}` }];
  if (typeof type !== 'string') return [{ field: 'type', message: `must be a string; ${expected}` }];
  const message = messageTypeSet.has(type)
    ? `"${type}" is sent by the ${otherSide}, not by the ${sentBy}; ${expected}`
    : `unknown type ${quote(type)}; ${expected}`;
  return [{ field: 'type', message }];
}

/**
 * Check a parsed frame from the executor: an object whose `type` is one the executor sends, valid
 * against that type's schema. On success `message` is the frame itself (not a copy).
 */
export function validateInbound(frame: unknown): InboundResult {
  if (frame !== null && typeof frame === 'object') {
    const fn = inboundValidators.get((frame as { type?: unknown }).type as string);
    if (fn) {
      if (fn(frame)) return { ok: true, message: frame as InboundMessage };
      return { ok: false, errors: formatErrors(fn.errors) };
    }
  }
  return { ok: false, errors: typeProblem(frame, INBOUND_TYPES, 'executor', 'service') };
}

/** Check a frame the service is about to send (tests and docs; the hot path does not need it). */
export function validateOutbound(frame: unknown): OutboundResult {
  if (frame !== null && typeof frame === 'object') {
    const fn = outboundValidators.get((frame as { type?: unknown }).type as string);
    if (fn) {
      if (fn(frame)) return { ok: true, message: frame as OutboundMessage };
      return { ok: false, errors: formatErrors(fn.errors) };
    }
  }
  return { ok: false, errors: typeProblem(frame, OUTBOUND_TYPES, 'service', 'executor') };
}

const stepActionValidator = compiledFor('StepAction');
const testCaseStepsValidator = compiledFor('TestCaseSteps');

/** Check one step action (`{ action, ... }`); error fields start with `prefix` (e.g. `steps[0].otp`). */
export function validateStepAction(action: unknown, prefix = ''): ValidationResult<StepAction> {
  return run<StepAction>(stepActionValidator, action, prefix);
}

/** Check the steps of a test case (REST body member `steps`); error fields look like `steps[2].otp.locator.by`. */
export function validateTestCaseSteps(steps: unknown, prefix = 'steps'): ValidationResult<TestCaseStep[]> {
  return run<TestCaseStep[]>(testCaseStepsValidator, steps, prefix);
}

export type { InboundType, OutboundType };
