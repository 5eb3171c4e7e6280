// Part of the composition root: the ports of the console and of MCP, built from the parts
// src/service.ts makes. Each door reads through the same functions and stores as the REST routes.

import type { HistoryAnswers } from './ai/history-answers.js';
import type { createAi } from './ai/index.js';
import type { createArtifacts } from './artifacts/index.js';
import type { createAssets } from './assets/index.js';
import type { ConsoleData } from './console/data.js';
import type { McpBackend } from './mcp/tools.js';
import type { OtpEngine } from './otp/engine/engine.js';
import type { RunCommands } from './otp/runs/commands.js';
import type { RunViews } from './otp/store/run-views.js';

export interface DoorParts {
  runs: RunCommands;
  views: RunViews;
  artifacts: Awaited<ReturnType<typeof createArtifacts>>;
  ai: ReturnType<typeof createAi>;
  aiHistory: HistoryAnswers;
}

export function consoleDataOf({
  runs,
  views,
  engine,
  artifacts,
  assets,
  ai,
  aiHistory,
}: DoorParts & { engine: OtpEngine; assets: Awaited<ReturnType<typeof createAssets>> }): ConsoleData {
  return {
    runs,
    ...aiHistory.console,
    caseLinks: artifacts.aiPorts.caseLinks,
    sessions: (projectId, query) => views.sessions(projectId, query),
    session: (projectId, sessionId) => views.session(projectId, sessionId),
    liveness: (projectId, sessionId) => engine.watch.sessionLiveness(projectId, sessionId),
    artifacts: (principal, kind, limit) => artifacts.stores.get(kind)!.list(principal, { limit, sort: 'createdAt' }),
    artifact: (principal, kind, id) => artifacts.stores.get(kind)!.get(principal, id),
    releases: (principal, limit) =>
      artifacts.stores.get('release')!.list(principal, { limit, sort: '-createdAt' }) as ReturnType<
        ConsoleData['releases']
      >,
    readiness: (principal, releaseId) => artifacts.readiness(principal, releaseId),
    buckets: (principal, limit) => assets.reads.buckets(principal, { limit }),
    assets: (principal, bucketRef, limit) => assets.reads.assets(principal, bucketRef, { limit }),
    signedUrl: async (principal, assetId, origin) => (await assets.reads.signedUrl(principal, assetId, origin)).url,
    failures: (principal, query) => ai.clusters(principal, query),
    triage: (principal, runId) => ai.triage(principal, runId),
    onRunChange: (listener) => engine.watch.onRunChange(listener),
    onSessionChange: (listener) => engine.watch.onSessionChanged(listener),
  };
}

export function mcpBackendOf(
  { runs, views, artifacts, ai, aiHistory }: DoorParts,
  absolute: (path: string) => string,
): McpBackend {
  return {
    runs,
    sessions: (principal, query) => views.sessions(principal.projectId, query),
    testCases: artifacts.stores.get('test_case')!,
    requirements: artifacts.stores.get('requirement')!,
    coverage: (principal, kind, id) => artifacts.coverage(principal, kind, id),
    readiness: (principal, releaseId) => artifacts.readiness(principal, releaseId),
    flaky: (principal, query) => aiHistory.flaky(principal, query),
    absolute,
    ai,
  };
}
