// What a resource's routes need of its store. A store keeps one kind of record (the artifacts table,
// projects, groups) and owns its rules: scoping to the caller's tenant or project, the revision
// check of If-Match inside the write's transaction, and the fields it sets itself.
import type { Principal } from '../../auth/principal.js';
import type { IfMatch } from '../conditional.js';
import type { listQueryProperties, Page } from '../pagination.js';
import type { QueryOf } from '../route.js';
import type { Data, Rec } from './definition.js';

/**
 * A list query once the resource's query schema passed it: limit and sort (defaults filled in),
 * cursor, updatedSince, and one entry per filter given (an array of values for "any of").
 */
export type ListQuery = QueryOf<{ type: 'object'; properties: typeof listQueryProperties }>;

/**
 * Bodies are `Data`: they were checked against the create or update schema built from the
 * definition's fields, which are only known at run time.
 */
export interface ResourceStore {
  create(principal: Principal, input: Data): Promise<Rec>;
  get(principal: Principal, id: string): Promise<Rec>;
  list(principal: Principal, query: ListQuery): Promise<Page<Rec>>;
  update(principal: Principal, id: string, patch: Data, ifMatch: IfMatch): Promise<Rec>;
  remove(principal: Principal, id: string, ifMatch: IfMatch): Promise<void>;
}
