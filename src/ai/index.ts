// Answers from run history (docs/ai.md): failure signatures and clusters, triage of a run, bug
// drafts. Built once by the composition root from its ports (run facts, runs and sessions as REST
// reads them, the artifact stores and links, the webhook outbox, the AI meter).

import { isFinalRunStatus } from '../../machines/types.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeEvents } from '../db/change-events.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { ResourceStore } from '../rest/resource/store.js';
import type { RouteDef } from '../rest/route.js';
import { type BugDraft, draftBug } from './bug-draft.js';
import type { BugLinkSource } from './bug-links.js';
import { BugLookup } from './bugs.js';
import { type FailureCluster, listClusters } from './clusters.js';
import type { RunFailureSource, RunReader } from './facts.js';
import { FailureStore } from './failure-store.js';
import { FailureHistory } from './history.js';
import { Judgements } from './judgements.js';
import type { AiMeter } from './meter.js';
import { type AiOperations, aiRoutes } from './routes.js';
import { FailureScanner } from './scanner.js';
import { type RunTriage, triageRun } from './triage.js';

export type { AiMeter, BugDraft, FailureCluster, RunTriage };

export interface AiDeps {
  db: Db;
  log: Logger;
  meter: AiMeter;
  facts: RunFailureSource;
  reader: RunReader;
  stores: { bug: ResourceStore; testResult: ResourceStore; testCase: ResourceStore };
  /** Bugs linked to test cases and to the results of OTP runs (known issues from every link a person makes). */
  bugLinks: BugLinkSource;
  link(principal: Principal, kind: string, id: string, input: { targetId: string; relation: string }): Promise<unknown>;
  events?: ChangeEvents;
  absolute(path: string): string;
  /** How often the backfill looks for finished runs without signatures (0: only when asked). */
  sweepMs: number;
}

export interface Ai extends AiOperations {
  routes: RouteDef[];
  scanner: FailureScanner;
  /** A run's status changed (the `run-live` notice): a final one queues its failures for signing. */
  runChanged(runId: string, status: string): void;
  start(): void;
  stop(): Promise<void>;
}

export function createAi(deps: AiDeps): Ai {
  const { db } = deps;
  const scanner = new FailureScanner(deps.facts, new FailureStore(db, deps.events), deps.log, {
    sweepMs: deps.sweepMs,
  });
  const bugs = new BugLookup(db, deps.stores.bug);
  const judgements = new Judgements(db);
  const history = new FailureHistory(db);
  const ai: Ai = {
    meter: deps.meter,
    routes: [],
    scanner,
    judgements,
    clusters: (principal, query) => listClusters(db, bugs, principal, query),
    triage: (principal, runId) =>
      triageRun({ reader: deps.reader, history, bugs, bugLinks: deps.bugLinks, judgements }, principal, runId),
    draftBug: (principal, body) =>
      draftBug(
        {
          reader: deps.reader,
          bugs,
          stores: deps.stores,
          absolute: deps.absolute,
          linkFoundBy: (p, bugId, targetId) => deps.link(p, 'bug', bugId, { targetId, relation: 'found_by' }),
        },
        principal,
        body,
      ),
    runChanged: (runId, status) => {
      if (isFinalRunStatus(status)) scanner.runFinished(runId);
    },
    start: () => scanner.start(),
    stop: () => scanner.stop(),
  };
  ai.routes = aiRoutes(ai);
  return ai;
}
export { flakyQuery } from './flaky/schema.js';
