// Queries and form fields (src/validation/text-fields.ts): their text is coerced by the rules of Ajv's
// coerceTypes, then checked by the service's one Ajv configuration. The reference below is Ajv itself
// with coerceTypes and useDefaults, as the query and form doors had it: both must read every input
// alike, so moving the coercion out of Ajv changed nothing a caller sees but two things, tested below:
// the date-time format, and Infinity, which the old query instance (not strict) took for an integer.

import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { expect } from 'chai';
import { formatErrors } from '../../src/validation/field-errors.js';
import { compileTextFields, withDefaults } from '../../src/validation/text-fields.js';

type FormatsPlugin = typeof formatsModule.default;
const addFormats: FormatsPlugin =
  (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

function reference(coerceTypes: true | 'array') {
  const instance = new Ajv2020({ allErrors: true, coerceTypes, useDefaults: true, strict: false });
  addFormats(instance);
  return instance;
}

// Every shape of field a query or form of the service declares (see /openapi.json's parameters).
const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', maxLength: 200 },
    sort: { enum: ['createdAt', '-createdAt'], default: 'createdAt' },
    updatedSince: { type: 'string', format: 'date-time' },
    status: { type: 'array', items: { enum: ['open', 'closed'] }, maxItems: 2 },
    groupId: { type: 'array', items: { type: 'string', pattern: '^grp_' } },
    pinned: { type: 'boolean' },
    importance: { type: 'integer' },
    ratio: { type: 'number' },
    sizes: { type: 'array', items: { type: 'integer' } },
    either: { type: ['integer', 'boolean'] },
  },
};

const inputs: Record<string, unknown>[] = [
  {},
  { limit: '10' },
  { limit: ['10'] },
  { limit: ['10', '20'] },
  { limit: '1.5' },
  { limit: ' ' },
  { limit: '' },
  { limit: '0x10' },
  { limit: 'ten', cursor: 'x' },
  { cursor: ['a', 'b'] },
  { cursor: ['a'] },
  { sort: '-createdAt' },
  { sort: ['createdAt'] },
  { sort: 'oldest' },
  { updatedSince: '2024-05-01T12:00:00Z' },
  { updatedSince: '2024-05-01' },
  { status: 'open' },
  { status: ['open', 'closed'] },
  { status: ['open', 'closed', 'open'] },
  { status: 'opened' },
  { groupId: 'grp_1' },
  { groupId: ['grp_1', 'x'] },
  { pinned: 'true' },
  { pinned: 'false' },
  { pinned: 'yes' },
  { pinned: ['true'] },
  { importance: '3', ratio: '0.5' },
  { sizes: '3' },
  { sizes: ['3', 'x', '4.5'] },
  { either: 'true' },
  { either: '7' },
  { either: 'x' },
  { unknown: '1' },
];

describe('Query and form fields: coerced as Ajv coerces them, checked by the one Ajv configuration', () => {
  for (const [label, lists, coerceTypes] of [
    ['a query (coerceTypes: array)', true, 'array'],
    ['a form (coerceTypes: true)', false, true],
  ] as const) {
    it(`reads every input of ${label} as Ajv does: the same value, the same verdict, the same messages`, () => {
      const ours = compileTextFields(schema, { lists });
      const theirs = reference(coerceTypes).compile(schema);
      for (const input of inputs) {
        const copy = structuredClone(input);
        const valid = theirs(copy);
        const checked = ours(input, 'query');
        const got = checked.ok ? { valid: true, data: checked.value } : { valid: false, errors: checked.errors };
        const want = valid
          ? { valid: true, data: copy }
          : { valid: false, errors: formatErrors(theirs.errors, 'query') };
        expect(got, JSON.stringify(input)).to.deep.equal(want);
      }
    });
  }

  it('checks a date-time with the format bodies use (Date.parse let a date without a time or a zone through)', () => {
    const check = compileTextFields(schema, { lists: true });
    expect(check({ updatedSince: '2024-05-01T12:00:00+02:00' }, 'query').ok).to.equal(true);
    for (const text of ['2024-05-01', '2024-05-01T12:00:00', 'May 1, 2024']) {
      expect(check({ updatedSince: text }, 'query')).to.deep.equal({
        ok: false,
        errors: [
          {
            field: 'query.updatedSince',
            message: 'must be an ISO 8601 date-time with time zone, such as 2024-05-01T12:00:00Z',
          },
        ],
      });
    }
  });

  // Not in the table above: Ajv's coercion takes "Infinity" for an integer (without strictNumbers, and
  // with it skips the bounds), so `?importance=Infinity` reached the handler. Checked after coercion,
  // with strict numbers, it is refused.
  it('refuses Infinity where a number or an integer is declared', () => {
    const check = compileTextFields(schema, { lists: true });
    expect(check({ importance: 'Infinity', ratio: '-Infinity' }, 'query')).to.deep.equal({
      ok: false,
      errors: [
        { field: 'query.importance', message: 'must be an integer' },
        { field: 'query.ratio', message: 'must be a number' },
      ],
    });
  });

  it('does not change the fields it was given, and gives each call its own copy of a default', () => {
    const check = compileTextFields(
      { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, default: [] } } },
      { lists: true },
    );
    const input = { n: '1' };
    const first = check(input, 'query');
    const second = check(input, 'query');
    expect(input).to.deep.equal({ n: '1' });
    if (!first.ok || !second.ok) throw new Error('expected both to pass');
    expect(first.value.tags).to.deep.equal([]);
    expect(first.value.tags).not.to.equal(second.value.tags);
  });

  it('refuses a schema it would read differently from Ajv (a field holding a schema of its own)', () => {
    expect(() =>
      compileTextFields(
        { type: 'object', properties: { n: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] } } },
        { lists: true },
      ),
    ).to.throw('n: keyword "anyOf" is not supported in a query or form field');
    expect(() =>
      compileTextFields(
        { type: 'object', properties: { n: { type: 'array', items: { $ref: 'Locator' } } } },
        { lists: true },
      ),
    ).to.throw('n.items: keyword "$ref" is not supported');
    expect(() => compileTextFields({ type: 'object', oneOf: [{ required: ['a'] }] }, { lists: true })).to.throw(
      'keyword "oneOf" is not supported',
    );
  });

  it('fills in the top-level defaults a tool call leaves out (as Ajv useDefaults did), and no others', () => {
    const tool = {
      type: 'object',
      properties: {
        waitMs: { type: 'integer', default: 0 },
        run: { type: 'object', properties: { n: { default: 1 } } },
      },
    };
    expect(withDefaults(tool, { run: {} })).to.deep.equal({ waitMs: 0, run: {} });
    expect(withDefaults(tool, { waitMs: 5 })).to.deep.equal({ waitMs: 5 });
  });
});
