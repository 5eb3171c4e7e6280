// ai/flaky: flakiness from run history, and the quarantine of a test case.

import { errors } from '../../errors.js';
import { type RouteDef, route } from '../../rest/route.js';
import { AI_CHARGES } from '../charges.js';
import type { RunHistory } from '../run-history.js';
import { listFlakyCases } from './flaky-service.js';
import type { QuarantineStore } from './quarantine-store.js';
import {
  FlakyPageSchema,
  type FlakyQuery,
  flakyQuery,
  type QuarantineCreate,
  QuarantineCreateSchema,
  QuarantineSchema,
} from './schema.js';

export interface FlakyDeps {
  history: RunHistory;
  quarantines: QuarantineStore;
  /** Whether the project has this test case (the artifacts room answers). */
  testCaseExists(projectId: string, testCaseId: string): Promise<boolean>;
}

export function flakyRoutes({ history, quarantines, testCaseExists }: FlakyDeps): RouteDef[] {
  const tag = 'ai';
  return [
    route<unknown, FlakyQuery>({
      method: 'get',
      path: '/ai/flaky',
      auth: 'read',
      tag,
      operationId: 'listFlakyTestCases',
      charge: AI_CHARGES.flaky,
      query: flakyQuery,
      response: FlakyPageSchema,
      summary:
        'Rank test cases by flakiness from their recent history (outcome flips of the same version, passes on retry), with the reasons and the runs that show it',
      handler: ({ principal, query }) => listFlakyCases({ history, quarantines }, principal, query),
    }),
    route<QuarantineCreate>({
      method: 'post',
      path: '/ai/flaky/:testCaseId/quarantine',
      auth: 'write',
      tag,
      operationId: 'quarantineTestCase',
      body: QuarantineCreateSchema,
      response: QuarantineSchema,
      summary:
        'Quarantine a test case (or renew its quarantine): it still runs and reports, but its failure does not fail the run, until the quarantine expires',
      handler: async ({ principal, params, body }) => {
        if (!(await testCaseExists(principal.projectId, params.testCaseId)))
          throw errors.notFound('Test case', params.testCaseId);
        return quarantines.quarantine(principal, params.testCaseId, body);
      },
    }),
    {
      method: 'delete',
      path: '/ai/flaky/:testCaseId/quarantine',
      auth: 'write',
      tag,
      status: 200,
      operationId: 'releaseTestCase',
      response: QuarantineSchema,
      summary: 'End the quarantine of a test case: its failures fail runs again from the next run on',
      handler: async ({ principal, params }) => ({
        ...(await quarantines.release(principal, params.testCaseId)),
        renewed: false,
      }),
    },
  ];
}
