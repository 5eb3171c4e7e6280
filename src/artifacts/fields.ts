// Field schemas that many artifacts share, so that a label or an assignee means the same everywhere.
import type { JsonSchema } from '../rest/route.js';
import type { WriteContext } from './kind.js';

export const title = (description: string, maxLength = 300): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength,
  description,
});

export const text = (description: string, maxLength = 50_000): JsonSchema => ({
  type: 'string',
  maxLength,
  description,
});

export const description = text('Longer explanation (Markdown)');

export const labels: JsonSchema = {
  type: 'array',
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 50 },
  default: [],
  description: 'Free labels to group and filter by',
};

export const person = (description: string): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description,
});

export const assignee = person('Who is responsible: a user name or e-mail');

export const priority: JsonSchema = {
  enum: ['urgent', 'high', 'medium', 'low'],
  default: 'medium',
  description: 'How soon it matters',
};

export const status = (values: readonly string[], fallback: string, description: string): JsonSchema => ({
  enum: values,
  default: fallback,
  description,
});

export const date = (description: string): JsonSchema => ({ type: 'string', format: 'date', description });

export const dateTime = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });

const prefixPattern = (prefixes: readonly string[]) =>
  prefixes.length === 1 ? `^${prefixes[0]}_` : `^(${prefixes.join('|')})_`;

/** A field naming another artifact (its kind is checked on write, see ArtifactDefinition.refs). */
export const ref = (prefixes: readonly string[], description: string): JsonSchema => ({
  type: 'string',
  pattern: prefixPattern(prefixes),
  maxLength: 100,
  description,
});

export const refs = (prefixes: readonly string[], description: string, maxItems = 1000): JsonSchema => ({
  type: 'array',
  maxItems,
  uniqueItems: true,
  items: { type: 'string', pattern: prefixPattern(prefixes), maxLength: 100 },
  description,
});

/**
 * A prepare hook that stamps `stamp` with the time a record's `field` enters one of `values`, and
 * removes the stamp when it leaves them (e.g. closedAt when a milestone closes; reopened: gone).
 */
export function stampWhen(field: string, values: readonly string[], stamp: string) {
  return ({ next, prev }: Pick<WriteContext, 'next' | 'prev'>) => {
    const now = values.includes(String(next[field]));
    const before = prev ? values.includes(String(prev.data[field])) : false;
    if (now && !before) next[stamp] = new Date().toISOString();
    else if (!now) delete next[stamp];
  };
}
