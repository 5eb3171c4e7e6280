import { IdPrefix } from '../../ids.js';
import { assignee, date, description, labels, ref, refs, status, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const releasePlans = defineArtifact({
  path: 'release-plans',
  kind: 'release_plan',
  schemaName: 'ReleasePlan',
  pluralName: 'ReleasePlans',
  label: 'release plan',
  idPrefix: IdPrefix.releasePlan,
  description: 'What goes into a release and when: its goals, its window and the planned work items in priority order.',
  fields: {
    title: title('Name of the plan'),
    description,
    releaseId: ref([IdPrefix.release], 'The release it plans'),
    status: status(['draft', 'approved', 'active', 'completed', 'cancelled'], 'draft', 'Where the plan stands'),
    goals: {
      type: 'array',
      maxItems: 50,
      items: { type: 'string', minLength: 1, maxLength: 1000 },
      description: 'What the release should achieve',
    },
    startDate: date('Start of the window'),
    endDate: date('End of the window (code freeze, ship date)'),
    itemIds: refs(
      [IdPrefix.requirement, IdPrefix.ticket, IdPrefix.bug, IdPrefix.specification],
      'Planned requirements, tickets, bugs and specifications, in priority order',
    ),
    assignee: { ...assignee, description: 'Who owns the plan' },
    labels,
  },
  required: ['title'],
  refs: { releaseId: ['release'], itemIds: ['requirement', 'ticket', 'bug', 'specification'] },
  filters: ['status', 'releaseId', 'assignee', 'labels'],
});
