// Platform artifacts (bugs, tickets, requirements, test cases, runs and results, releases, ...): one
// declarative definition each, one generic store over the `artifacts` table, the same REST routes and
// conventions for all, links between them, coverage, and test results recorded from OTP runs.

import type { Principal } from '../auth/principal.js';
import type { Config } from '../config.js';
import { type ChangeEvents, noChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { TestCaseSink, TestCaseSource } from '../otp/engine/test-case-source.js';
import { resourceRoutes } from '../rest/resource/routes.js';
import { buildSchemas, type ResourceSchemas } from '../rest/resource/schemas.js';
import type { RouteDef } from '../rest/route.js';
import { coverageOf, coverageRoute } from './coverage.js';
import { ResultImporter } from './imports/import-service.js';
import { importRoutes } from './imports/routes.js';
import type { ArtifactDefinition } from './kind.js';
import { LinkService, linkRoutes } from './links.js';
import { readinessRoutes } from './readiness/routes.js';
import { type ReadinessThresholdsSource, ReadinessWatch, ReleaseReadiness } from './readiness/service.js';
import { artifactDefinitions } from './registry.js';
import { ArtifactStore, artifactCount } from './store.js';
import { withReportFormats } from './tests/run-reports.js';
import { RunResultRecorder, type RunResultsSource } from './tests/run-results.js';
import { ArtifactTestCaseSink, ArtifactTestCaseSource } from './tests/test-case-source.js';
import { WebhookSubscriptions } from './webhooks/subscriptions.js';

export type { ReadinessThresholdsSource };

import { aiPortsOf } from './ai-ports.js';

export { artifactDefinitions, WebhookSubscriptions };

// Schemas are registered once per process, however many services a test process starts.
export const artifactSchemas: ReadonlyMap<string, ResourceSchemas> = new Map(
  artifactDefinitions.map((d) => [d.kind, buildSchemas(d)]),
);
export const artifactRegistry: ReadonlyMap<string, ArtifactDefinition> = new Map(
  artifactDefinitions.map((d) => [d.kind, d]),
);

export interface Artifacts {
  routes: RouteDef[];
  /** Called when an OTP run's verdict is durable: records test results for its testRunId. */
  onRunFinished(runId: string): Promise<void>;
  /** Test cases, plans and test runs for the OTP run planner. */
  testCases: TestCaseSource;
  /** Where recordings become test cases (the OTP recordings write through it). */
  testCaseSink: TestCaseSink;
  /** The store behind each kind's REST routes, for the other doors onto the same commands (MCP tools, the console). */
  stores: ReadonlyMap<string, ArtifactStore>;
  /** Links an artifact of `kind` to another, as POST /<kind>/:id/links does (bug drafts link found_by). */
  link(principal: Principal, kind: string, id: string, input: { targetId: string; relation: string }): Promise<unknown>;
  /** What the ai room needs of test cases, requirements and links (its ports). */
  aiPorts: ReturnType<typeof aiPortsOf>;
  /** What GET /<kind>/:id/coverage answers. */
  coverage(principal: Principal, kind: string, id: string): Promise<unknown>;
  /** What GET /releases/:id/readiness answers. */
  readiness(principal: Principal, releaseId: string): ReturnType<ReleaseReadiness['compute']>;
  /** Artifacts a project holds, as its quota counts them (for GET /platform/entitlement). */
  artifactCount(projectId: string): Promise<number>;
  stop(): Promise<void>;
}

export interface ArtifactsDeps {
  config: Config;
  db: Db;
  log: Logger;
  /** The OTP runs whose test results this room records (the OTP store implements it). */
  runResults: RunResultsSource;
  /** Where changes are reported to webhooks (the webhook-delivery room's outbox). */
  events?: ChangeEvents;
  /** The project's readiness thresholds (the platform room's settings). */
  readinessThresholds: ReadinessThresholdsSource;
}

export async function createArtifacts({
  config,
  db,
  log,
  runResults,
  events: outbox = noChangeEvents,
  readinessThresholds,
}: ArtifactsDeps): Promise<Artifacts> {
  const readiness = new ReleaseReadiness(db, readinessThresholds, outbox);
  const watch = new ReadinessWatch(readiness, outbox, log);
  // Every write's events also tell the readiness watch that a release may have moved.
  const events = watch.wrap();
  const links = new LinkService(db, artifactRegistry, (projectId) => watch.touch(projectId));
  const routes: RouteDef[] = [];
  const settings = { allowPrivateWebhookTargets: config.webhooks.allowPrivateTargets };
  let testCaseStore: ArtifactStore | undefined;
  const stores = new Map<string, ArtifactStore>();
  for (const def of artifactDefinitions) {
    const store = new ArtifactStore(def, { db, registry: artifactRegistry, limits: config.limits, events, settings });
    if (def.kind === 'test_case') testCaseStore = store;
    stores.set(def.kind, store);
    const crud = resourceRoutes(def, artifactSchemas.get(def.kind)!, store, {
      createErrors: [402],
      notes: {
        create:
          'Counts toward the artifact quota of the tier: over it, the answer is 402 QUOTA_EXCEEDED and nothing is written.',
        delete: 'Links to and from it go with it; fields of other records that named it drop the reference.',
      },
    });
    // A test run also answers JUnit XML and CTRF (tests/run-reports.ts).
    if (def.kind === 'test_run') {
      const at = crud.findIndex((r) => r.method === 'get' && r.path.endsWith('/:id'));
      crud[at] = withReportFormats(crud[at]!, store, db, config.publicUrl);
    }
    routes.push(...crud);
    if (def.links !== false) routes.push(...linkRoutes(def, links));
    if (def.coverage) routes.push(coverageRoute(def, db));
  }

  const testCaseSource = new ArtifactTestCaseSource(db);
  const kinds = { testResult: artifactRegistry.get('test_result')!, testRun: artifactRegistry.get('test_run')! };
  const recorder = new RunResultRecorder(db, runResults, log, kinds, events);
  const importer = new ResultImporter(
    db,
    { testCase: artifactRegistry.get('test_case')!, testResult: kinds.testResult },
    config.limits,
    events,
  );
  routes.push(...importRoutes(importer, config.limits.importMaxBytes), ...readinessRoutes(readiness));
  // The safety net for results whose hook never ran (a process died, a run finished as orphaned).
  const sweepTimer = setInterval(() => {
    recorder.sweep().catch((err) => log.error('test result sweep failed', { err }));
  }, config.heartbeatMs);
  sweepTimer.unref();

  return {
    routes,
    onRunFinished: (runId) => recorder.record(runId),
    testCases: testCaseSource,
    testCaseSink: new ArtifactTestCaseSink(testCaseStore!),
    stores,
    link: (principal, kind, id, input) => links.create(principal, artifactRegistry.get(kind)!, id, input as never),
    aiPorts: aiPortsOf(db, stores, links, testCaseSource),
    coverage: (principal, kind, id) => coverageOf(db, principal, artifactRegistry.get(kind)!, id),
    readiness: (principal, releaseId) => readiness.compute(principal.projectId, releaseId),
    artifactCount: (projectId) => artifactCount(db, projectId),
    stop: async () => {
      clearInterval(sweepTimer);
      await watch.stop();
    },
  };
}
