// platform/settings: the calling key's project's settings (readiness thresholds), read by any key and
// changed by an admin key (If-Match guards against lost updates).
import { type RouteDef, route } from '../../rest/route.js';
import { type ProjectSettingsPatch, ProjectSettingsPatchSchema, ProjectSettingsSchema } from './schema.js';
import type { ProjectSettings } from './store.js';

export function settingsRoutes(settings: ProjectSettings): RouteDef[] {
  const tag = 'platform/settings';
  return [
    {
      method: 'get',
      path: '/platform/settings',
      auth: 'read',
      tag,
      operationId: 'getProjectSettings',
      etag: true,
      summary: "The settings of the calling key's project (readiness thresholds), each field its default until changed",
      response: ProjectSettingsSchema,
      handler: ({ principal }) => settings.get(principal.projectId),
    },
    route<ProjectSettingsPatch>({
      method: 'patch',
      path: '/platform/settings',
      auth: 'admin',
      tag,
      operationId: 'updateProjectSettings',
      etag: true,
      conditional: true,
      summary: "Change the settings of the calling key's project (merge patch; null puts a field back to its default)",
      body: ProjectSettingsPatchSchema,
      response: ProjectSettingsSchema,
      handler: ({ principal, body, ifMatch }) => settings.update(principal.projectId, body, ifMatch),
    }),
  ];
}
