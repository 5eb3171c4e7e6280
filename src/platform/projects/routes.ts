// platform/projects: the generic CRUD routes, with the create answer carrying the first admin key
// (never stored for Idempotency-Key replays) and delete meaning the lifecycle's delete.
import type { Db } from '../../db/connect.js';
import { resourceRoutes } from '../../rest/resource/routes.js';
import type { RouteDef } from '../../rest/route.js';
import type { Lifecycle } from '../lifecycle/store.js';
import { ProjectCreatedSchema, projectDefinition, projectSchemas } from './schema.js';
import { ProjectStore } from './store.js';

export function projectRoutes(db: Db, lifecycle: Lifecycle): RouteDef[] {
  return resourceRoutes(projectDefinition, projectSchemas, new ProjectStore(db, lifecycle), {
    createResponse: ProjectCreatedSchema,
    createAnswersSecret: true,
    notes: {
      create:
        "The project is made in the caller's tenant with its first admin key, whose secret is in the answer (adminKey.key) this once.",
      delete: 'Same as POST /platform/lifecycle/{projectId}/delete: its keys stop working at once.',
    },
  });
}
