import { IdPrefix } from '../../ids.js';
import { assignee, labels, ref, refs, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const testPlans = defineArtifact({
  path: 'tests/plans',
  kind: 'test_plan',
  schemaName: 'TestPlan',
  pluralName: 'TestPlans',
  label: 'test plan',
  idPrefix: IdPrefix.testPlan,
  description: 'An ordered list of test cases, run together with POST /otp/runs { planId }.',
  fields: {
    title: title('Name of the plan'),
    description: text('What the plan is for', 20_000),
    testCaseIds: refs([IdPrefix.testCase], 'The test cases of the plan, in the order they run'),
    retries: {
      type: 'integer',
      minimum: 0,
      maximum: 3,
      description:
        'How many times a test case whose steps fail runs again when the plan runs (default for POST /otp/runs retries; 0 when absent)',
    },
    status: status(['draft', 'active', 'archived'], 'active', 'Whether the plan is in use'),
    releaseId: ref([IdPrefix.release], 'The release it tests'),
    milestoneId: ref([IdPrefix.milestone], 'The milestone it tests'),
    assignee: { ...assignee, description: 'Who owns the plan' },
    labels,
  },
  required: ['title', 'testCaseIds'],
  refs: { testCaseIds: ['test_case'], releaseId: ['release'], milestoneId: ['milestone'] },
  filters: ['status', 'releaseId', 'milestoneId', 'assignee', 'labels'],
});
