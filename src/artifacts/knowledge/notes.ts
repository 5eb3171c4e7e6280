import { IdPrefix } from '../../ids.js';
import { labels, text } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const notes = defineArtifact({
  path: 'notes',
  kind: 'note',
  schemaName: 'Note',
  pluralName: 'Notes',
  label: 'note',
  idPrefix: IdPrefix.note,
  description: 'A free note; link it to whatever it is about.',
  fields: {
    title: text('Optional heading', 300),
    content: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The note (Markdown)' },
    pinned: { type: 'boolean', default: false, description: 'Keep it on top' },
    labels,
  },
  required: ['content'],
  filters: ['pinned', 'labels'],
});
