import { IdPrefix } from '../../ids.js';
import { assignee, description, labels, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

const CONTENT = ['title', 'description', 'acceptanceCriteria'];

export const requirements = defineArtifact({
  path: 'requirements',
  kind: 'requirement',
  schemaName: 'Requirement',
  pluralName: 'Requirements',
  label: 'requirement',
  idPrefix: IdPrefix.requirement,
  description:
    'Something the product must do or be. Test cases cover it (links "covers"); GET /requirements/{id}/coverage tells which and how they last fared.',
  fields: {
    title: title('The requirement in one line'),
    description,
    externalId: text('Its identifier elsewhere, e.g. REQ-12', 100),
    type: {
      enum: ['functional', 'non_functional', 'business', 'constraint'],
      default: 'functional',
      description: 'Kind of requirement',
    },
    priority: { enum: ['must', 'should', 'could', 'wont'], default: 'should', description: 'MoSCoW priority' },
    status: status(
      ['draft', 'proposed', 'approved', 'implemented', 'verified', 'rejected', 'obsolete'],
      'draft',
      'Where it stands',
    ),
    acceptanceCriteria: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 2000 },
      description: 'Conditions that must hold for it to be met',
    },
    source: text('Who or what asked for it (stakeholder, document, regulation)', 500),
    assignee: { ...assignee, description: 'Who owns it' },
    labels,
  },
  required: ['title'],
  computed: {
    contentChangedAt: {
      type: 'string',
      format: 'date-time',
      readOnly: true,
      description:
        'When its title, description or acceptance criteria last changed (absent until they do): a covers link whose case last passed before it is suspect',
    },
  },
  filters: ['status', 'type', 'priority', 'assignee', 'externalId', 'labels'],
  coverage: true,
  hooks: {
    // What a covering case checks is its text: a change of it makes the case's last pass suspect (docs/releases.md).
    prepare: ({ op, next, prev }) => {
      if (op !== 'update' || !prev) return;
      if (CONTENT.some((field) => JSON.stringify(next[field] ?? null) !== JSON.stringify(prev.data[field] ?? null)))
        next.contentChangedAt = new Date().toISOString();
    },
  },
});
