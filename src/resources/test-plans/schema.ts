const title = { type: 'string', minLength: 1, maxLength: 300, description: 'Name of the plan' };
const description = { type: 'string', maxLength: 20000 };
const testCaseIds = {
  type: 'array',
  maxItems: 1000,
  uniqueItems: true,
  items: { type: 'string', pattern: '^tc_' },
  description: 'The test cases of the plan, in the order they run',
};

export const testPlanCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'testCaseIds'],
  properties: { title, description, testCaseIds },
};

export const testPlanPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { title, description, testCaseIds },
};
