// platform/*: context and entitlement, projects, groups and lifecycle. Each has its folder here with
// its schema, routes and store side by side. The imports below are in the order their schemas are
// registered, which is the order of their components in /openapi.json.

import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { RouteDef } from '../rest/route.js';
import { contextRoutes } from './context/routes.js';
import { groupRoutes } from './groups/routes.js';
import { lifecycleRoutes } from './lifecycle/routes.js';
import { Lifecycle } from './lifecycle/store.js';
import { projectRoutes } from './projects/routes.js';
import { settingsRoutes } from './settings/routes.js';
import type { ProjectSettings } from './settings/store.js';

export { ProjectSettings } from './settings/store.js';

export interface PlatformDeps {
  db: Db;
  config: Config;
  /** A project was archived, restored or deleted (see Lifecycle). */
  projectChanged(projectId: string, status: 'active' | 'archived' | 'deleted'): Promise<void>;
  /** Artifacts a project holds (the artifacts room counts them). */
  artifactCount(projectId: string): Promise<number>;
  /** Bytes of assets a project keeps, when asset storage can tell. */
  storageBytes?(projectId: string): Promise<number>;
  /** The projects' settings (its store is shared with the artifacts room's readiness, through a port). */
  settings: ProjectSettings;
}

export function platformRoutes({
  db,
  config,
  projectChanged,
  artifactCount,
  storageBytes,
  settings,
}: PlatformDeps): RouteDef[] {
  const lifecycle = new Lifecycle(db, projectChanged);
  return [
    ...contextRoutes({ db, limits: config.limits, artifactCount, storageBytes }),
    ...projectRoutes(db, lifecycle),
    ...groupRoutes(db),
    ...lifecycleRoutes(lifecycle),
    ...settingsRoutes(settings),
  ];
}
