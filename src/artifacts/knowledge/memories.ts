import { IdPrefix } from '../../ids.js';
import { dateTime, labels, text } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const memories = defineArtifact({
  path: 'memories',
  kind: 'memory',
  schemaName: 'Memory',
  pluralName: 'Memories',
  label: 'memory',
  idPrefix: IdPrefix.memory,
  description:
    'Something an agent (or a person) should remember about the project: a fact, preference, decision or instruction.',
  fields: {
    content: { type: 'string', minLength: 1, maxLength: 20_000, description: 'What to remember' },
    subject: text('What it is about, in a few words', 300),
    type: {
      enum: ['fact', 'preference', 'decision', 'instruction', 'context'],
      default: 'fact',
      description: 'Kind of memory',
    },
    source: text('Where it came from: an agent, a conversation, a document', 300),
    importance: {
      type: 'integer',
      minimum: 1,
      maximum: 5,
      default: 3,
      description: '1 (trivia) to 5 (must not be forgotten)',
    },
    expiresAt: dateTime('When it stops being true or useful'),
    labels,
  },
  required: ['content'],
  filters: ['type', 'importance', 'source', 'labels'],
});
