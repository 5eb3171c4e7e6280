import { IdPrefix } from '../../ids.js';
import {
  assignee,
  date,
  dateTime,
  description,
  labels,
  person,
  priority,
  stampWhen,
  status,
  title,
} from '../fields.js';
import { defineArtifact } from '../kind.js';

export const tickets = defineArtifact({
  path: 'tickets',
  kind: 'ticket',
  schemaName: 'Ticket',
  pluralName: 'Tickets',
  label: 'ticket',
  idPrefix: IdPrefix.ticket,
  description:
    'A piece of work to do: a task, story or feature, with its state, owner and estimate. Link it to what it implements.',
  fields: {
    title: title('What is to be done'),
    description,
    type: {
      enum: ['task', 'story', 'feature', 'improvement', 'chore', 'epic'],
      default: 'task',
      description: 'Kind of work',
    },
    status: status(['todo', 'in_progress', 'in_review', 'done', 'cancelled'], 'todo', 'Where the work stands'),
    priority,
    assignee,
    reporter: person('Who asked for it'),
    estimate: {
      type: 'number',
      minimum: 0,
      maximum: 10_000,
      description: "Size, in the team's unit (story points, hours)",
    },
    dueDate: date('When it should be done'),
    labels,
  },
  required: ['title'],
  computed: { completedAt: { ...dateTime('When it was last done or cancelled'), readOnly: true } },
  filters: ['status', 'type', 'priority', 'assignee', 'reporter', 'labels'],
  hooks: { prepare: stampWhen('status', ['done', 'cancelled'], 'completedAt') },
});
