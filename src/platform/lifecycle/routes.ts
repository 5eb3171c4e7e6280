// platform/lifecycle/{projectId}: read, archive, restore, delete. Actions, not a resource: no body,
// If-Match honoured, and allowed while the project is archived (or it could never be restored).
import type { RouteDef } from '../../rest/route.js';
import { LifecycleSchema } from './schema.js';
import type { Lifecycle, LifecycleAction } from './store.js';

export function lifecycleRoutes(lifecycle: Lifecycle): RouteDef[] {
  const tag = 'platform/lifecycle';
  const path = '/platform/lifecycle/:projectId';
  const action = (name: LifecycleAction, summary: string): RouteDef => ({
    method: 'post',
    path: `${path}/${name}`,
    auth: 'admin',
    tag,
    etag: true,
    conditional: true,
    allowArchived: true,
    operationId: { archive: 'archiveProject', restore: 'restoreProject', delete: 'lifecycleDeleteProject' }[name],
    summary,
    response: LifecycleSchema,
    handler: ({ principal, params, ifMatch }) => lifecycle.change(principal, params.projectId, name, ifMatch),
  });
  return [
    {
      method: 'get',
      path,
      auth: 'read',
      tag,
      etag: true,
      operationId: 'getProjectLifecycle',
      summary: 'Where a project of the tenant is in its lifecycle',
      response: LifecycleSchema,
      handler: ({ principal, params }) => lifecycle.view(principal, params.projectId),
    },
    action(
      'archive',
      'Archive a project: it becomes read-only (writes answer 409) and its OTP executors are disconnected',
    ),
    action('restore', 'Restore an archived project: writes work again'),
    action(
      'delete',
      'Delete a project: its keys stop working at once and it is not found any more; this cannot be undone',
    ),
  ];
}
