import type { Knex } from 'knex';

export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Items per page (1-200)' },
  cursor: { type: 'string', maxLength: 200, description: 'The nextCursor of the previous page' },
} as const;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Keyset pagination on the id column. Ids are ULID-based and so sort by creation time, which makes the
 * order stable while rows are added; the cursor is simply the last id of the page.
 */
export async function paginate<Row extends { id: string }, T>(
  query: Knex.QueryBuilder,
  page: { limit?: number; cursor?: string },
  map: (row: Row) => T,
  idColumn = 'id',
): Promise<Page<T>> {
  const limit = page.limit ?? 50;
  if (page.cursor) query.where(idColumn, '>', page.cursor);
  const rows = (await query.orderBy(idColumn, 'asc').limit(limit + 1)) as Row[];
  const more = rows.length > limit;
  const items = (more ? rows.slice(0, limit) : rows).map(map);
  return { items, nextCursor: more ? rows[limit - 1].id : null };
}
