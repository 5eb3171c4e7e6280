// GET /releases/:id/readiness: the verdict and every rule behind it (docs/releases.md).
import type { RouteDef } from '../../rest/route.js';
import { ReadinessSchema } from './schema.js';
import type { ReleaseReadiness } from './service.js';

export function readinessRoutes(readiness: ReleaseReadiness): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/releases/:id/readiness',
      auth: 'read',
      tag: 'releases',
      operationId: 'getReleaseReadiness',
      summary:
        'Whether the release may ship: ready, at_risk or blocked, with every rule (passed, failed or undefined) and the records behind it',
      description:
        "Judged on the requirements planned for the release (links planned_for to it or to one of its release plans, or items of its release plans), its test plans and test runs (releaseId, or planned_for), the latest result of each case in those runs, the covers links (suspect ones apart) and the bugs found by its tests (found_by), with the project's thresholds (GET /platform/settings). " +
        'Each answer whose state differs from the previous one is kept: new failures are counted against the state before it, and a verdict that changes is reported as the webhook event release.readiness_changed.',
      response: ReadinessSchema,
      handler: ({ principal, params }) => readiness.compute(principal.projectId, params.id!),
    },
  ];
}
