// Paging of lists: the query parameters every list takes, and keyset pagination over them.
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import type { QueryOf } from './route.js';

export const pageQueryProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Items per page (1-200)' },
  cursor: { type: 'string', maxLength: 200, description: 'The nextCursor of the previous page' },
} as const;

export const SORTS = ['createdAt', '-createdAt', 'updatedAt', '-updatedAt'] as const;
export type Sort = (typeof SORTS)[number];

export const sortQueryProperties = {
  sort: {
    enum: SORTS,
    default: 'createdAt',
    description:
      'Order of the items: by creation or last change, oldest first (a leading - for newest first). Ties break on id, so the order is stable',
  },
  updatedSince: { type: 'string', format: 'date-time', description: 'Only items changed at or after this instant' },
} as const;

/** The query of a plain paged list (limit, cursor) and nothing else. */
export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: pageQueryProperties,
} as const;
export type PageQuery = QueryOf<typeof pageQuerySchema>;

/** What every resource list takes before its filters (src/rest/resource/schemas.ts adds those). */
export const listQueryProperties = { ...pageQueryProperties, ...sortQueryProperties } as const;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** What paginate needs of a query: knex's and Objection's query builders both fit. */
export interface PageableQuery {
  where(column: string, operator: string, value: string): unknown;
  orderBy(column: string, direction: 'asc'): { limit(count: number): PromiseLike<unknown> };
}

/**
 * Keyset pagination on the id column. Ids are ULID-based and so sort by creation time, which makes the
 * order stable while rows are added; the cursor is simply the last id of the page.
 */
export async function paginate<Row extends { id: string }, T>(
  query: PageableQuery,
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

function badCursor(): never {
  throw errors.validation('Invalid cursor', [
    { field: 'query.cursor', message: 'give the nextCursor of the previous page, with the same sort' },
  ]);
}

/**
 * Keyset pagination in one of the SORTS. Creation order is the id (ULIDs sort by creation); the
 * updatedAt orders key on (updated_at, id). The cursor is opaque: base64url of [sort, updatedAt?, id],
 * so a cursor of one sort is refused by another.
 */
export async function paginateSorted<Row extends { id: string; updated_at: Date }, T>(
  query: Knex.QueryBuilder,
  page: { limit?: number; cursor?: string; sort?: Sort },
  map: (rows: Row[]) => Promise<T[]> | T[],
  columns: { id: string; updatedAt: string },
): Promise<Page<T>> {
  const limit = page.limit ?? 50;
  const sort: Sort = page.sort ?? 'createdAt';
  const desc = sort.startsWith('-');
  const byUpdate = sort.endsWith('updatedAt');
  const op = desc ? '<' : '>';
  if (page.cursor) {
    const { updatedAt, id } = decodeCursor(page.cursor, sort, byUpdate);
    if (byUpdate) query.whereRaw(`(??, ??) ${op} (?::timestamptz, ?)`, [columns.updatedAt, columns.id, updatedAt, id]);
    else query.where(columns.id, op, id);
  }
  const direction = desc ? 'desc' : 'asc';
  if (byUpdate) query.orderBy(columns.updatedAt, direction);
  query.orderBy(columns.id, direction);
  const rows = (await query.limit(limit + 1)) as Row[];
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  const nextCursor =
    more && last
      ? Buffer.from(JSON.stringify([sort, byUpdate ? last.updated_at.toISOString() : null, last.id])).toString(
          'base64url',
        )
      : null;
  return { items: await map(pageRows), nextCursor };
}

/** Where a cursor of `sort` points; a cursor that is not one of ours, or of another sort, is a 400. */
function decodeCursor(cursor: string, sort: Sort, byUpdate: boolean): { updatedAt: string | null; id: string } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    badCursor();
  }
  if (!Array.isArray(decoded) || decoded[0] !== sort) badCursor();
  const [, updatedAt, id] = decoded as [string, string | null, string];
  if (typeof id !== 'string') badCursor();
  if (byUpdate && (typeof updatedAt !== 'string' || Number.isNaN(Date.parse(updatedAt)))) badCursor();
  return { updatedAt, id };
}
