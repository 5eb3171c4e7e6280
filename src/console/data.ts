// What the console reads and does, as a port: src/service.ts wires it to the very functions and stores
// the REST routes use (RunViews, the engine, the artifact stores, the asset services), so a page and
// the API can never tell two stories. The console holds no SQL and names no table.

import type { consoleViews } from '../ai/console-views.js';
import type { HealingProposal } from '../ai/healing/healing-store.js';
import type { FailureCluster, RunTriage } from '../ai/index.js';
import type { ReleaseReadinessView } from '../artifacts/readiness/schema.js';
import type { Principal } from '../auth/principal.js';
import type { SessionListener, SessionLiveness } from '../otp/engine/run-watch.js';
import type { RunCommands } from '../otp/runs/commands.js';
import type { SessionView } from '../otp/store/run-views.js';
import type { Page } from '../rest/pagination.js';

export type { SessionView };

type ConsoleViews = ReturnType<typeof consoleViews>;

/** A record of the artifacts room (a test case, a plan): its fields as the API answers them. */
export type ArtifactRecord = { id: string; title?: string; [field: string]: unknown };

/** A release's readiness, as its schema says GET /releases/:id/readiness answers it. */
export type ReadinessView = ReleaseReadinessView;

export interface BucketRecord {
  id: string;
  name: string;
  [field: string]: unknown;
}

export interface AssetRecord {
  id: string;
  name: string;
  contentType: string;
  size: number;
  [field: string]: unknown;
}

/** A healing proposal as the ai room gives it (GET /ai/healing's items). */
export type HealingView = HealingProposal;

/** A test case's history as the ai room gives the console: its flakiness over its last runs, quarantine, proposals. */
export type CaseHistoryView = Awaited<ReturnType<ConsoleViews['caseHistory']>>;

export interface ConsoleData {
  /** The run commands (src/otp/runs), as every door calls them. */
  runs: Pick<RunCommands, 'latest' | 'read' | 'trace' | 'start' | 'cancel'>;
  sessions(projectId: string, query: { status: 'open' | 'closed' | 'all'; limit: number }): Promise<Page<SessionView>>;
  session(projectId: string, sessionId: string): Promise<SessionView>;
  /** Only the process holding a session knows its last pong and its machine; undefined elsewhere. */
  liveness(projectId: string, sessionId: string): SessionLiveness | undefined;
  /** kind: test_case or test_plan. */
  artifacts(principal: Principal, kind: 'test_case' | 'test_plan', limit: number): Promise<Page<ArtifactRecord>>;
  artifact(principal: Principal, kind: 'test_case' | 'test_plan', id: string): Promise<ArtifactRecord>;
  /** The project's releases, newest first. */
  releases(principal: Principal, limit: number): Promise<Page<ArtifactRecord>>;
  readiness(principal: Principal, releaseId: string): Promise<ReadinessView>;
  buckets(principal: Principal, limit: number): Promise<Page<BucketRecord>>;
  assets(principal: Principal, bucketRef: string, limit: number): Promise<Page<AssetRecord>>;
  /** A link to the bytes that needs no key (15 minutes). */
  signedUrl(principal: Principal, assetId: string, origin: string): Promise<string>;
  /** Failure clusters, as GET /ai/failures answers them. */
  failures(
    principal: Principal,
    query: { since?: string; status: 'all' | 'new' | 'recurring'; testCaseId?: string; limit: number; cursor?: string },
  ): Promise<Page<FailureCluster>>;
  /** The triage of a finished run, as POST /ai/runs/{id}/triage answers it. */
  triage(principal: Principal, runId: string): Promise<RunTriage>;
  caseHistory(principal: Principal, testCaseId: string): Promise<CaseHistoryView>;
  /** The artifacts linked to a test case (requirements it covers, bugs, ...). */
  caseLinks(
    principal: Principal,
    testCaseId: string,
  ): Promise<Array<{ id: string; kind: string; title: string | null; relation: string; reads: string }>>;
  healingProposals(principal: Principal, status: 'proposed' | 'accepted' | 'rejected'): Promise<HealingView[]>;
  decideHealing(principal: Principal, id: string, decision: 'accept' | 'reject', reason?: string): Promise<HealingView>;
  quarantine(principal: Principal, testCaseId: string, on: boolean): Promise<unknown>;
  /** Every transition of a run this process drives. */
  onRunChange(listener: (runId: string, projectId: string) => void): () => void;
  /** Every change of the machine of a session this process holds (`keepalive`: a ping or pong only). */
  onSessionChange(listener: SessionListener): () => void;
}
