// ai/test-cases/draft: a draft test case from a requirement, by the configured language model.

import type { BodyOf } from '../../rest/route.js';
import { type RouteDef, route } from '../../rest/route.js';
import { registerSchema } from '../../rest/schemas.js';
import { AI_CHARGES } from '../charges.js';
import type { DraftService } from './draft-service.js';

const draftRequest = {
  $id: 'TestCaseDraftRequest',
  title: 'TestCaseDraftRequest',
  type: 'object',
  additionalProperties: false,
  required: ['requirementId'],
  properties: {
    requirementId: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'The requirement whose text and acceptance criteria the draft checks',
    },
    save: {
      type: 'boolean',
      default: false,
      description: 'Save it as a test case of status draft, with a covers link to the requirement',
    },
  },
} as const;
const DraftRequestSchema = registerSchema(draftRequest);
type DraftRequest = BodyOf<typeof draftRequest>;

const DraftAnswerSchema = registerSchema({
  $id: 'TestCaseDraft',
  title: 'TestCaseDraft',
  type: 'object',
  additionalProperties: false,
  required: ['requirementId', 'model', 'attempts', 'draft', 'testCase'],
  properties: {
    requirementId: { type: 'string' },
    model: { type: 'string', description: 'The model that wrote it (AI_MODEL)' },
    attempts: {
      type: 'integer',
      minimum: 1,
      maximum: 2,
      description: '2 when the first answer did not validate and was sent back once',
    },
    draft: {
      type: 'object',
      required: ['title', 'steps'],
      properties: {
        title: { type: 'string' },
        description: { type: 'string' },
        steps: { type: 'array', items: { $ref: 'TestCaseStep' } },
      },
    },
    testCase: { type: ['object', 'null'], description: 'The saved test case (save: true), else null' },
  },
});

export function draftRoutes(drafts: DraftService): RouteDef[] {
  return [
    route<DraftRequest>({
      method: 'post',
      path: '/ai/test-cases/draft',
      auth: 'write',
      tag: 'ai',
      operationId: 'draftTestCase',
      errors: [404, 502, 503],
      charge: AI_CHARGES.testCaseDraft,
      body: DraftRequestSchema,
      response: DraftAnswerSchema,
      summary:
        'Draft a test case from a requirement with the configured language model (503 ai_not_configured without one); steps validate against the step schema',
      handler: ({ principal, body, charge }) => drafts.draft(principal, body, charge),
    }),
  ];
}
