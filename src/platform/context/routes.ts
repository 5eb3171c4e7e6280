// platform/context and platform/entitlement: two reads about the calling key, no resource behind them.
import type { RouteDef } from '../../rest/route.js';
import { ContextSchema, EntitlementSchema } from './schema.js';
import { type EntitlementDeps, entitlementOf } from './store.js';

export function contextRoutes(deps: EntitlementDeps): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/platform/context',
      auth: 'read',
      tag: 'platform/context',
      operationId: 'getContext',
      summary: 'The tenant, project, scope and tier of the calling key',
      response: ContextSchema,
      handler: ({ principal }) => ({
        tenantId: principal.tenantId,
        projectId: principal.projectId,
        scope: principal.scope,
        keyId: principal.keyId,
        tier: principal.tier ?? 'free',
        projectStatus: principal.projectStatus ?? 'active',
      }),
    },
    {
      method: 'get',
      path: '/platform/entitlement',
      auth: 'read',
      tag: 'platform/entitlement',
      operationId: 'getEntitlement',
      summary: "The tier of the caller's tenant, its quotas and limits, and the project's current usage",
      response: EntitlementSchema,
      handler: ({ principal, koa }) => entitlementOf(deps, principal, koa.state.rateLimitCount as number | undefined),
    },
  ];
}
