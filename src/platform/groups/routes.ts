// platform/groups: the generic CRUD routes; a duplicate name is a 409 on create.
import type { Db } from '../../db/connect.js';
import { resourceRoutes } from '../../rest/resource/routes.js';
import type { RouteDef } from '../../rest/route.js';
import { groupDefinition, groupSchemas } from './schema.js';
import { GroupStore } from './store.js';

export function groupRoutes(db: Db): RouteDef[] {
  return resourceRoutes(groupDefinition, groupSchemas, new GroupStore(db), {
    createErrors: [409],
    notes: { delete: 'Its projects stay, without a group.' },
  });
}
