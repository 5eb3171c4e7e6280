// What a key learns about itself: platform/context (who it is) and platform/entitlement (its tenant's
// tier, the limits that come with it and the project's usage). Both are read-only: tiers change by
// billing, not through the API.
import { SCOPES } from '../../auth/principal.js';
import { WINDOW_SEC } from '../../rest/middleware/rate-limit.js';
import { registerSchema } from '../../rest/schemas.js';

export const ContextSchema = registerSchema({
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
  required: ['artifacts', 'storageBytes', 'requestsPerMinute', 'aiCallsPerMonth'],
  properties: {
    artifacts: { type: 'integer', description: 'Artifacts a project may hold' },
    storageBytes: { type: 'integer', description: 'Bytes of assets a project may keep' },
    requestsPerMinute: { type: 'integer', description: 'REST requests per minute per API key' },
    aiCallsPerMonth: {
      type: 'integer',
      description: 'AI calls the tenant may make per calendar month (GET /ai/usage shows what is used)',
    },
  },
};

export const EntitlementSchema = registerSchema({
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
        requestsThisWindow: {
          type: 'integer',
          description: `Requests of this key in its current ${WINDOW_SEC} s window, this one included`,
        },
        storageBytes: {
          type: 'integer',
          description: 'Bytes of assets the project keeps (when asset storage reports it)',
        },
      },
    },
    upgradeUrl: { type: 'string', format: 'uri' },
  },
});
