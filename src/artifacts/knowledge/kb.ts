import { IdPrefix } from '../../ids.js';
import { dateTime, labels, person, stampWhen, status, text, title } from '../fields.js';
import { defineArtifact } from '../kind.js';

export const kb = defineArtifact({
  path: 'kb',
  kind: 'kb_article',
  schemaName: 'KbArticle',
  pluralName: 'KbArticles',
  label: 'knowledge-base article',
  idPrefix: IdPrefix.kbArticle,
  description: 'A knowledge-base article: how-tos, explanations and answers kept for people and agents.',
  fields: {
    title: title('Title of the article'),
    content: { type: 'string', minLength: 1, maxLength: 200_000, description: 'The article' },
    format: { enum: ['markdown', 'text', 'html'], default: 'markdown', description: 'How content is written' },
    category: text('Section it belongs to', 100),
    status: status(['draft', 'published', 'archived'], 'draft', 'Only published articles are meant for readers'),
    author: person('Who wrote it'),
    labels,
  },
  required: ['title', 'content'],
  computed: { publishedAt: { ...dateTime('When it was last published'), readOnly: true } },
  filters: ['status', 'category', 'author', 'labels'],
  hooks: { prepare: stampWhen('status', ['published'], 'publishedAt') },
});
