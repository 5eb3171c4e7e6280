const title = { type: 'string', minLength: 1, maxLength: 300, description: 'What the test case checks' };
const description = { type: 'string', maxLength: 20000, description: 'Longer explanation, preconditions' };
const steps = {
  type: 'array',
  maxItems: 500,
  items: { $ref: 'TestCaseStep' },
  description: 'The steps, in order; each carries its OTP action in `otp`',
};

export const testCaseCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'steps'],
  properties: { title, description, steps },
};

export const testCasePatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { title, description, steps },
};
