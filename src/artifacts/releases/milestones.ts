import { IdPrefix } from '../../ids.js';
import { date, dateTime, description, labels, stampWhen, status, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const milestones = defineArtifact({
  path: 'milestones',
  kind: 'milestone',
  schemaName: 'Milestone',
  pluralName: 'Milestones',
  label: 'milestone',
  idPrefix: IdPrefix.milestone,
  description: 'A dated goal (a beta, a demo, a quarter) that releases, test runs and work are planned for.',
  fields: {
    title: title('Name of the milestone'),
    description,
    dueDate: date('When it is due'),
    status: status(['open', 'closed'], 'open', 'open until reached or dropped'),
    labels,
  },
  required: ['title'],
  computed: { closedAt: { ...dateTime('When it was closed'), readOnly: true } },
  filters: ['status', 'labels'],
  hooks: { prepare: stampWhen('status', ['closed'], 'closedAt') },
});
