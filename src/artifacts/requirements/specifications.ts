import { IdPrefix } from '../../ids.js';
import { assignee, labels, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const specifications = defineArtifact({
  path: 'specifications',
  kind: 'specification',
  schemaName: 'Specification',
  pluralName: 'Specifications',
  label: 'specification',
  idPrefix: IdPrefix.specification,
  description:
    'A document that details how something works: it specifies requirements (links "specifies") and test cases cover it.',
  fields: {
    title: title('Name of the document'),
    summary: text('A short abstract', 2_000),
    content: text('The document itself', 200_000),
    format: { enum: ['markdown', 'text', 'html'], default: 'markdown', description: 'How content is written' },
    status: status(['draft', 'in_review', 'approved', 'deprecated'], 'draft', 'Where the document stands'),
    revision: text("The document's own version, e.g. 1.2", 50),
    assignee: { ...assignee, description: 'Who owns the document' },
    labels,
  },
  required: ['title'],
  filters: ['status', 'format', 'assignee', 'labels'],
  coverage: true,
});
