// formatErrors (src/validation/field-errors.ts): field paths and one message per problem.
import { expect } from 'chai';
import { ACTION_NAMES } from '../../src/otp/protocol/schemas/index.js';
import '../../src/otp/protocol/validators.js';
import { ajv } from '../../src/validation/ajv.js';
import { formatErrors } from '../../src/validation/field-errors.js';
import { RUN } from './helpers.js';

describe('formatErrors: field paths with prefixes and indexes, one message per discriminator failure', () => {
  it('returns nothing for no errors', () => {
    expect(formatErrors(null)).to.deep.equal([]);
    expect(formatErrors([])).to.deep.equal([]);
  });

  it('builds paths with a prefix, array indexes and escaped keys', () => {
    const fn = ajv.getSchema('RunStartPayload')!;
    expect(
      fn({
        runId: RUN,
        vars: { 'a/b': 1 },
        allowedOrigins: [],
        testCases: [{ id: 'tc', title: 't', steps: -1 }],
        totalSteps: 0,
        defaults: { stepTimeoutMs: 1 },
      }),
    ).to.equal(false);
    expect(formatErrors(fn.errors, 'payload')).to.deep.equal([
      { field: 'payload.vars.a/b', message: 'must be a string' },
      { field: 'payload.testCases[0].steps', message: 'must be >= 0' },
    ]);
  });

  it('turns a discriminator failure into one message instead of one per branch', () => {
    const fn = ajv.getSchema('StepAction')!;
    expect(fn({ action: 'scrol', dy: 5 })).to.equal(false);
    expect(fn.errors!.length).to.be.greaterThan(0);
    expect(formatErrors(fn.errors)).to.deep.equal([
      { field: 'action', message: `unknown action "scrol"; expected one of ${ACTION_NAMES.join(', ')}` },
    ]);
  });
});
