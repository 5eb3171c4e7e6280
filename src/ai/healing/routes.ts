// ai/healing: locator fixes proposed from run history, accepted or rejected by a person.
import { type RouteDef, route } from '../../rest/route.js';
import { AI_CHARGES } from '../charges.js';
import type { HealingService } from './healing-service.js';
import {
  HealingPageSchema,
  HealingProposalSchema,
  type HealingQuery,
  type HealingReject,
  HealingRejectSchema,
  healingQuery,
} from './schema.js';

export function healingRoutes(healing: HealingService): RouteDef[] {
  const tag = 'ai';
  return [
    route<unknown, HealingQuery>({
      method: 'get',
      path: '/ai/healing',
      auth: 'read',
      tag,
      operationId: 'listHealingProposals',
      charge: AI_CHARGES.healing,
      query: healingQuery,
      response: HealingPageSchema,
      summary:
        'Locator fixes proposed from run history (a step passed only through another candidate, or its first matched nothing), with their evidence',
      handler: async ({ principal, query }) => {
        const items = await healing.list(principal, {
          status: query.status ?? 'proposed',
          limit: query.limit ?? 50,
          ...(query.testCaseId ? { testCaseId: query.testCaseId } : {}),
        });
        return { items };
      },
    }),
    {
      method: 'post',
      path: '/ai/healing/:id/accept',
      auth: 'write',
      tag,
      operationId: 'acceptHealingProposal',
      errors: [409, 412],
      response: HealingProposalSchema,
      summary:
        "Accept a proposal: the test case gets a new version with the new locator as the step's first candidate (the old one kept after it)",
      handler: ({ principal, params }) => healing.accept(principal, params.id),
    },
    route<HealingReject>({
      method: 'post',
      path: '/ai/healing/:id/reject',
      auth: 'write',
      tag,
      operationId: 'rejectHealingProposal',
      errors: [409],
      body: HealingRejectSchema,
      response: HealingProposalSchema,
      summary: 'Reject a proposal: the refusal is remembered and the same evidence is not proposed again',
      handler: ({ principal, params, body }) => healing.reject(principal, params.id, body.reason),
    }),
  ];
}
