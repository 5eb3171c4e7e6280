// platform/*: context, projects, groups, entitlement and lifecycle.
import type { RouteDef } from '../rest/route.js';
import type { Db } from '../db/connect.js';
import type { Config } from '../config.js';
import { registerSchema } from '../rest/schemas.js';
import { currentCount, WINDOW_SEC } from '../rest/middleware/rate-limit.js';
import { effectiveLimits, UPGRADE_URL } from '../tiers.js';
import { SCOPES } from '../auth/principal.js';
import { resourceRoutes } from '../rest/resource/routes.js';
import { projectDefinition, projectSchemas, ProjectCreatedSchema, ProjectStore } from './projects.js';
import { groupDefinition, groupSchemas, GroupStore } from './groups.js';
import { Lifecycle, lifecycleRoutes } from './lifecycle.js';

const ContextSchema = registerSchema({
  $id: 'PlatformContext',
  title: 'PlatformContext',
  description: 'Who the calling key is',
  type: 'object',
  additionalProperties: false,
  required: ['tenantId', 'projectId', 'scope', 'keyId', 'tier', 'projectStatus'],
  properties: {
    tenantId: { type: 'string' },
    projectId: { type: 'string' },
    scope: { enum: SCOPES },
    keyId: { type: 'string' },
    tier: { type: 'string', description: "The tenant's tier" },
    projectStatus: { enum: ['active', 'archived'] },
  },
});

const limitsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['artifacts', 'storageBytes', 'requestsPerMinute'],
  properties: {
    artifacts: { type: 'integer', description: 'Artifacts a project may hold' },
    storageBytes: { type: 'integer', description: 'Bytes of assets a project may keep' },
    requestsPerMinute: { type: 'integer', description: 'REST requests per minute per API key' },
  },
};

const EntitlementSchema = registerSchema({
  $id: 'Entitlement',
  title: 'Entitlement',
  description: "The tier of the caller's tenant, its limits and the project's current usage",
  type: 'object',
  additionalProperties: false,
  required: ['tenantId', 'projectId', 'tier', 'limits', 'usage', 'upgradeUrl'],
  properties: {
    tenantId: { type: 'string' },
    projectId: { type: 'string' },
    tier: { type: 'string' },
    limits: limitsSchema,
    usage: {
      type: 'object',
      additionalProperties: false,
      required: ['artifacts', 'requestsThisWindow'],
      properties: {
        artifacts: { type: 'integer', description: 'Artifacts the project holds' },
        requestsThisWindow: { type: 'integer', description: `Requests of this key in its current ${WINDOW_SEC} s window, this one included` },
        storageBytes: { type: 'integer', description: 'Bytes of assets the project keeps (when asset storage reports it)' },
      },
    },
    upgradeUrl: { type: 'string', format: 'uri' },
  },
});

export interface PlatformDeps {
  db: Db;
  config: Config;
  /** A project was archived, restored or deleted (see Lifecycle). */
  projectChanged(projectId: string, status: 'active' | 'archived' | 'deleted'): Promise<void>;
  /** Bytes of assets a project keeps, when asset storage can tell. */
  storageBytes?(projectId: string): Promise<number>;
}

export function platformRoutes({ db, config, projectChanged, storageBytes }: PlatformDeps): RouteDef[] {
  const lifecycle = new Lifecycle(db, projectChanged);
  return [
    {
      method: 'get', path: '/platform/context', auth: 'read', tag: 'platform/context', operationId: 'getContext',
      summary: 'The tenant, project, scope and tier of the calling key', response: ContextSchema,
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
      method: 'get', path: '/platform/entitlement', auth: 'read', tag: 'platform/entitlement', operationId: 'getEntitlement',
      summary: "The tier of the caller's tenant, its quotas and limits, and the project's current usage", response: EntitlementSchema,
      handler: async ({ principal, koa }) => {
        const usage = await db('project_usage').where('project_id', principal.projectId).first('artifacts');
        const bytes = storageBytes ? await storageBytes(principal.projectId) : undefined;
        // The tier as it is now: the principal's copy may be a few seconds old (see KeyCache).
        const tenant = await db('tenants').where('id', principal.tenantId).first('tier');
        const tier = tenant?.tier ?? principal.tier ?? 'free';
        return {
          tenantId: principal.tenantId,
          projectId: principal.projectId,
          tier,
          limits: effectiveLimits(tier, config.limits),
          usage: {
            artifacts: usage?.artifacts ?? 0,
            // This request's own place in the window as the rate limiter counted it (other
            // processes' requests show within its sync interval); PostgreSQL's count without one.
            requestsThisWindow: (koa.state.rateLimitCount as number | undefined) ?? (await currentCount(db, principal.keyId)),
            ...(bytes !== undefined ? { storageBytes: bytes } : {}),
          },
          upgradeUrl: UPGRADE_URL,
        };
      },
    },
    ...resourceRoutes(projectDefinition, projectSchemas, new ProjectStore(db, lifecycle), {
      createResponse: ProjectCreatedSchema,
      createAnswersSecret: true,
      notes: {
        create: 'The project is made in the caller\'s tenant with its first admin key, whose secret is in the answer (adminKey.key) this once.',
        delete: 'Same as POST /platform/lifecycle/{projectId}/delete: its keys stop working at once.',
      },
    }),
    ...resourceRoutes(groupDefinition, groupSchemas, new GroupStore(db), {
      createErrors: [409],
      notes: { delete: 'Its projects stay, without a group.' },
    }),
    ...lifecycleRoutes(lifecycle),
  ];
}
