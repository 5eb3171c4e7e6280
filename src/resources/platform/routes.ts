import type { RouteDef } from '../../rest/route.js';

export function platformRoutes(): RouteDef[] {
  return [
    {
      method: 'get', path: '/platform/context', auth: 'read', tag: 'platform',
      summary: 'The tenant, project and scope of the calling key',
      handler: ({ principal }) => ({
        tenantId: principal.tenantId,
        projectId: principal.projectId,
        scope: principal.scope,
        keyId: principal.keyId,
      }),
    },
  ];
}
