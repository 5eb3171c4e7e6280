// The ai/* routes of failures, triage and bug drafts (tag `ai`). Each declares what it costs its
// project's AI allowance (charges.ts), which the Api charges before the handler; the handlers call
// the plain functions of this room.

import type { Principal } from '../auth/principal.js';
import type { Page } from '../rest/pagination.js';
import { type PageQuery, pageQuerySchema } from '../rest/pagination.js';
import { type QueryOf, type RouteDef, route } from '../rest/route.js';
import type { BugDraft } from './bug-draft.js';
import { AI_CHARGES } from './charges.js';
import type { FailuresQuery as ClusterQuery, FailureCluster } from './clusters.js';
import type { Judgements } from './judgements.js';
import type { AiMeter } from './meter.js';
import {
  type BugDraftBody,
  BugDraftBodySchema,
  BugDraftSchema,
  type CorrectionBody,
  CorrectionBodySchema,
  CorrectionPageSchema,
  CorrectionSchema,
  FailureClusterPageSchema,
  failuresQuery,
  type RuleBody,
  RuleBodySchema,
  RulePageSchema,
  RuleSchema,
  TriageSchema,
} from './schemas.js';
import type { RunTriage } from './triage.js';

const tag = 'ai';
type FailuresQuery = QueryOf<typeof failuresQuery>;

/** What the routes call (the room's Ai, src/ai/index.ts). */
export interface AiOperations {
  meter: AiMeter;
  judgements: Judgements;
  clusters(principal: Principal, query: ClusterQuery): Promise<Page<FailureCluster>>;
  triage(principal: Principal, runId: string): Promise<RunTriage>;
  draftBug(principal: Principal, body: BugDraftBody): Promise<BugDraft>;
}

/** The routes in their order in /openapi.json: what failed, then what people say about it. */
export function aiRoutes(ai: AiOperations): RouteDef[] {
  return [...failureRoutes(ai), ...correctionRoutes(ai), ...ruleRoutes(ai)];
}

/** Failures grouped, a run triaged, a bug drafted. */
function failureRoutes(ai: AiOperations): RouteDef[] {
  return [
    route<unknown, FailuresQuery>({
      method: 'get',
      path: '/ai/failures',
      auth: 'read',
      tag,
      operationId: 'listFailureClusters',
      query: failuresQuery,
      response: FailureClusterPageSchema,
      summary:
        'Failure clusters: failed steps grouped by signature (error code, action, locator, normalised message), newest first',
      description:
        'Filtered by window (since, until; 30 days by default), test case, plan and status (new: first seen in the window). Each cluster has its counts in the window, its newest example with its screenshot, and the bugs filed for it.',
      charge: AI_CHARGES.failures,
      handler: ({ principal, query }) => ai.clusters(principal, query),
    }),
    {
      method: 'post',
      path: '/ai/runs/:id/triage',
      auth: 'read',
      tag,
      operationId: 'triageRun',
      response: TriageSchema,
      errors: [404, 409],
      charge: AI_CHARGES.triage,
      summary:
        'Triage a finished run: for each failed test case a category, a confidence, the reasons, similar earlier failures and the action to take',
      description:
        'Deterministic: the same facts give the same answer. Categories: product_regression, locator_drift, environment, flaky, known_issue. A correction of the signature (POST /ai/triage/corrections) wins, then the project rules (POST /ai/triage/rules), then the facts. 409 while the run has no verdict.',
      handler: ({ principal, params }) => ai.triage(principal, params.id!),
    },
    route<BugDraftBody>({
      method: 'post',
      path: '/ai/bugs/draft',
      auth: 'read',
      tag,
      operationId: 'draftBug',
      body: BugDraftBodySchema,
      response: BugDraftSchema,
      errors: [403, 404, 409],
      charge: AI_CHARGES.bugDraft,
      summary:
        'Draft a bug from a failed step of a run; with save (a write key), create it, linked found_by to the test result (else the test case)',
      description:
        "Steps to reproduce are the case's steps up to the failed one as sentences; the environment names the executor and the run's variables, never their values. A saved bug is shown with every later failure of the same signature (clusters, triage).",
      handler: ({ principal, body: request }) => ai.draftBug(principal, request),
    }),
  ];
}

/** The categories people set for signatures. */
function correctionRoutes(ai: AiOperations): RouteDef[] {
  return [
    route<unknown, PageQuery>({
      method: 'get',
      path: '/ai/triage/corrections',
      auth: 'read',
      tag,
      operationId: 'listTriageCorrections',
      query: pageQuerySchema,
      response: CorrectionPageSchema,
      summary: 'Categories people set for signatures',
      charge: AI_CHARGES.correctionsList,
      handler: ({ principal, query }) => ai.judgements.corrections(principal, query),
    }),
    route<CorrectionBody>({
      method: 'put',
      path: '/ai/triage/corrections',
      auth: 'write',
      tag,
      operationId: 'setTriageCorrection',
      body: CorrectionBodySchema,
      response: CorrectionSchema,
      charge: AI_CHARGES.correctionSet,
      summary: 'Set the category of a signature: it wins for that signature from then on (again: replaces it)',
      handler: ({ principal, body: request }) => ai.judgements.correct(principal, request),
    }),
    {
      method: 'delete',
      path: '/ai/triage/corrections/:signature',
      auth: 'write',
      tag,
      operationId: 'deleteTriageCorrection',
      status: 204,
      errors: [404],
      charge: AI_CHARGES.correctionDelete,
      summary: 'Forget the correction of a signature (the rules and the facts decide again)',
      handler: async ({ principal, params }) => {
        await ai.judgements.uncorrect(principal, params.signature!);
      },
    },
  ];
}

/** The project's rules: patterns mapped to categories. */
function ruleRoutes(ai: AiOperations): RouteDef[] {
  return [
    route<unknown, PageQuery>({
      method: 'get',
      path: '/ai/triage/rules',
      auth: 'read',
      tag,
      operationId: 'listTriageRules',
      query: pageQuerySchema,
      response: RulePageSchema,
      summary:
        'Project rules: a pattern on the signature or the message mapped to a category, oldest (tried first) first',
      charge: AI_CHARGES.rulesList,
      handler: ({ principal, query }) => ai.judgements.rules(principal, query),
    }),
    route<RuleBody>({
      method: 'post',
      path: '/ai/triage/rules',
      auth: 'write',
      tag,
      operationId: 'createTriageRule',
      status: 201,
      body: RuleBodySchema,
      response: RuleSchema,
      charge: AI_CHARGES.ruleCreate,
      summary: 'Add a project rule',
      description:
        'Rules are tried oldest first; the first whose pattern matches decides, unless a correction of the signature does.',
      handler: ({ principal, body: request }) => ai.judgements.addRule(principal, request),
    }),
    {
      method: 'get',
      path: '/ai/triage/rules/:id',
      auth: 'read',
      tag,
      operationId: 'getTriageRule',
      response: RuleSchema,
      errors: [404],
      charge: AI_CHARGES.ruleGet,
      summary: 'A project rule',
      handler: ({ principal, params }) => ai.judgements.rule(principal, params.id!),
    },
    {
      method: 'delete',
      path: '/ai/triage/rules/:id',
      auth: 'write',
      tag,
      operationId: 'deleteTriageRule',
      status: 204,
      errors: [404],
      charge: AI_CHARGES.ruleDelete,
      summary: 'Remove a project rule',
      handler: async ({ principal, params }) => {
        await ai.judgements.removeRule(principal, params.id!);
      },
    },
  ];
}
