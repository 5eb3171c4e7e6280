import { IdPrefix } from '../../ids.js';
// Imported, not only named: loading the protocol's schemas registers TestCaseStep, which the steps
// `$ref` (a module that bundles this schema, as the MCP tools do, then finds it whatever loaded first).
import { TestCaseStepSchema } from '../../otp/protocol/schemas/index.js';
import { assignee, labels, priority, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const testCases = defineArtifact({
  path: 'tests/cases',
  kind: 'test_case',
  schemaName: 'TestCase',
  pluralName: 'TestCases',
  label: 'test case',
  idPrefix: IdPrefix.testCase,
  description:
    'A test case: its steps, each an OTP action in `otp` with the fields of its step.exec. Run it with POST /otp/runs; link it to what it covers (relation "covers").',
  fields: {
    title: title('What the test case checks'),
    description: text('Longer explanation', 20_000),
    preconditions: text('What must hold before the first step', 10_000),
    steps: {
      type: 'array',
      maxItems: 500,
      items: { $ref: TestCaseStepSchema.$id },
      description: 'The steps, in order; each carries its OTP action in `otp`',
    },
    status: status(['draft', 'ready', 'deprecated'], 'ready', 'Whether it is meant to be run'),
    priority,
    assignee: { ...assignee, description: 'Who maintains it' },
    labels,
  },
  required: ['title', 'steps'],
  filters: ['status', 'priority', 'assignee', 'labels'],
});
