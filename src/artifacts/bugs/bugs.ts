import { IdPrefix } from '../../ids.js';
import {
  assignee,
  dateTime,
  description,
  labels,
  person,
  priority,
  stampWhen,
  status,
  text,
  title,
} from '../fields.js';
import { defineArtifact } from '../kind.js';

const DONE = ['resolved', 'closed', 'wont_fix', 'duplicate'];

export const bugs = defineArtifact({
  path: 'bugs',
  kind: 'bug',
  schemaName: 'Bug',
  pluralName: 'Bugs',
  label: 'bug',
  idPrefix: IdPrefix.bug,
  description:
    'A defect: what is wrong, how to reproduce it, how bad it is and where it stands. Link it to the test result that found it (found_by) and the release that fixes it (fixed_in).',
  fields: {
    title: title('One line saying what is wrong'),
    description,
    severity: {
      enum: ['critical', 'major', 'minor', 'trivial'],
      default: 'major',
      description: 'How bad it is for users',
    },
    priority,
    status: status(
      ['open', 'in_progress', 'resolved', 'closed', 'wont_fix', 'duplicate'],
      'open',
      'Where the bug stands',
    ),
    stepsToReproduce: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 2000 },
      description: 'What to do, in order, to see the bug',
    },
    expectedResult: text('What should happen', 10_000),
    actualResult: text('What happens instead', 10_000),
    environment: text('Where it happens: browser, OS, device, URL', 500),
    affectedVersion: text('Version in which it was seen', 100),
    assignee,
    reporter: person('Who reported it'),
    labels,
  },
  required: ['title'],
  computed: { resolvedAt: { ...dateTime('When it was last resolved, closed or dismissed'), readOnly: true } },
  filters: ['status', 'severity', 'priority', 'assignee', 'reporter', 'labels'],
  hooks: { prepare: stampWhen('status', DONE, 'resolvedAt') },
});
