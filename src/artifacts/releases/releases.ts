import { IdPrefix } from '../../ids.js';
import { date, dateTime, description, labels, ref, stampWhen, status, text } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const releases = defineArtifact({
  path: 'releases',
  kind: 'release',
  schemaName: 'Release',
  pluralName: 'Releases',
  label: 'release',
  idPrefix: IdPrefix.release,
  description:
    'A version of the product: its name (the version, e.g. 2.3.0, unique in the project), dates and state. (`version` on every record is its revision, not this.)',
  fields: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'The version, e.g. 2.3.0; unique in the project',
    },
    title: text('A headline or code name', 300),
    description,
    status: status(['planned', 'in_progress', 'released', 'cancelled'], 'planned', 'Where the release stands'),
    startDate: date('When work on it starts'),
    releaseDate: date('When it ships (planned, then actual)'),
    releaseNotes: text('What changed, for users (Markdown)', 100_000),
    milestoneId: ref([IdPrefix.milestone], 'The milestone it belongs to'),
    labels,
  },
  required: ['name'],
  computed: { releasedAt: { ...dateTime('When its status became released'), readOnly: true } },
  refs: { milestoneId: ['milestone'] },
  unique: ['name'],
  filters: ['status', 'name', 'milestoneId', 'labels'],
  hooks: { prepare: stampWhen('status', ['released'], 'releasedAt') },
});
