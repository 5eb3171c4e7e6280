// ai/usage: the tenant's monthly allowance of AI calls and what is used of it.
import type { RouteDef } from '../../rest/route.js';
import type { AiQuota } from './ai-quota.js';
import { AiUsageSchema } from './schema.js';

export function usageRoutes(quota: AiQuota): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/ai/usage',
      auth: 'read',
      tag: 'ai',
      operationId: 'getAiUsage',
      response: AiUsageSchema,
      summary:
        "The tenant's monthly allowance of AI calls, what is used of it, what each kind of call costs and when it renews",
      handler: ({ principal }) => quota.usage(principal.projectId),
    },
  ];
}
