// Schemas of the healing routes.
import type { BodyOf, QueryOf } from '../../rest/route.js';
import { registerSchema } from '../../rest/schemas.js';

export const healingQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: ['proposed', 'accepted', 'rejected'], default: 'proposed' },
    testCaseId: { type: 'string', maxLength: 100 },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
  },
} as const;
export type HealingQuery = QueryOf<typeof healingQuery>;

const locator = { type: 'object', description: 'A locator ({ by, value, ... })' } as const;

export const HealingProposalSchema = registerSchema({
  $id: 'HealingProposal',
  title: 'HealingProposal',
  description:
    'A proposed locator fix for one step of a test case, with the evidence from run history. Never applied on its own.',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'testCaseId',
    'caseVersion',
    'stepPosition',
    'oldLocator',
    'newLocator',
    'evidence',
    'status',
    'decidedBy',
    'decidedAt',
    'newVersion',
    'reason',
    'createdAt',
  ],
  properties: {
    id: { type: 'string', pattern: '^heal_' },
    testCaseId: { type: 'string' },
    caseVersion: { type: ['integer', 'null'], description: 'The version of the test case the evidence was seen on' },
    stepPosition: { type: 'integer', description: 'The step, 0-based, in the test case' },
    oldLocator: locator,
    newLocator: {
      ...locator,
      description: 'The candidate to put first: it matched exactly one visible, enabled element',
    },
    evidence: {
      type: 'object',
      description:
        'rule (passed_through_other | first_matched_nothing), the step label, the runs (newest first), occurrences, what each candidate matched in the newest run (count, visible, enabled), its screenshot, first and last seen',
    },
    status: { enum: ['proposed', 'accepted', 'rejected'] },
    decidedBy: { type: ['string', 'null'], description: 'The key that accepted or rejected it' },
    decidedAt: { type: ['string', 'null'], format: 'date-time' },
    newVersion: { type: ['integer', 'null'], description: 'The version of the test case accepting it made' },
    reason: { type: ['string', 'null'], description: 'Why it was rejected' },
    createdAt: { type: 'string', format: 'date-time' },
  },
});

export const HealingPageSchema = registerSchema({
  $id: 'HealingPage',
  title: 'HealingPage',
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: { items: { type: 'array', items: { $ref: 'HealingProposal' } } },
});

const healingReject = {
  $id: 'HealingReject',
  title: 'HealingReject',
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: 'string', minLength: 1, maxLength: 2000 } },
} as const;
export const HealingRejectSchema = registerSchema(healingReject);
export type HealingReject = BodyOf<typeof healingReject>;
