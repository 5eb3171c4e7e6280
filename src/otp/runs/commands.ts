// The run commands every door calls (REST, MCP, the console, and any later one): plain functions over
// ports. A door checks its caller's credentials and the request's shape, then calls one of these
// with the caller's principal; nothing else about runs is written twice.

import { CANCELLED_BY_REQUEST, isFinalRunStatus } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import { errors } from '../../errors.js';
import type { TestCaseSource } from '../engine/test-case-source.js';
import { DEFAULT_POLICY, type QueuePolicy } from '../queue/model.js';
import type { NewRun, RunStore } from '../store/run-store.js';
import type { RunTrace } from '../store/run-trace.js';
import type { RunViewCache } from '../store/run-view-cache.js';
import type { RunFilter, RunView, RunViews } from '../store/run-views.js';
import { planRun, type QuarantinedCases } from './planner.js';
import { queueingOf } from './queueing.js';
import type { RunRequest } from './request.js';

/** The live part of runs, which only the engine of this process knows (OtpEngine implements it). */
export interface RunEngine {
  /** Writes a planned run, started at once on a session of this process with room, else queued. */
  launch(run: NewRun): Promise<RunView>;
  /** 404 for a session the project does not have, 409 for a closed one. */
  ensureSessionOpen(projectId: string, sessionId: string): Promise<void>;
  /** Tells the run's driver to cancel: here, or by notice to the process that holds it. */
  cancelInFlight(runId: string): Promise<void>;
  awaitVerdict(projectId: string, runId: string, ms: number): Promise<RunView>;
  runTrace(projectId: string, runId: string): Promise<RunTrace>;
}

export interface RunPorts {
  engine: RunEngine;
  store: Pick<RunStore, 'runStatus' | 'cancelQueuedRun' | 'requestCancel' | 'supersede'>;
  views: Pick<RunViews, 'run' | 'runs' | 'latestRuns'>;
  /** Finished runs' JSON, kept in memory (GET /otp/runs/:id). */
  cache: Pick<RunViewCache, 'read'>;
  /** What runs are made of: test cases, plans and test runs (the artifacts room implements it). */
  testCases: TestCaseSource;
  /** Which test cases are quarantined when a run starts (the ai room implements it). */
  quarantine?: QuarantinedCases;
  limits: Pick<Config['otp'], 'maxSteps' | 'stepTimeoutMs'>;
  /** The project's queue policy (its settings: weights, limits, aging, the gate cap); the defaults when not given. */
  queuePolicy?: (projectId: string) => QueuePolicy | Promise<QueuePolicy>;
}

/** How long a cancel waits for the run's verdict before it answers the run as it then is. */
const CANCEL_WAIT_MS = 5_000;

export function runCommands(ports: RunPorts) {
  const { engine, store, views, cache } = ports;
  return {
    /** Plans the run (every check before anything starts), then starts or queues it. */
    async start(principal: Principal, request: RunRequest): Promise<RunView> {
      if (request.sessionId) await engine.ensureSessionOpen(principal.projectId, request.sessionId);
      const policy = await (ports.queuePolicy?.(principal.projectId) ?? DEFAULT_POLICY);
      const queue = queueingOf(principal, request, policy);
      const run = { ...(await planRun(ports.testCases, principal, request, ports.limits, ports.quarantine)), queue };
      if (request.cancelInProgress) {
        const superseded = await store.supersede(principal.projectId, queue, run.id, request.cancelRunning ?? false);
        for (const runId of superseded.running) await engine.cancelInFlight(runId);
      }
      // Answered as posted: where a queued run stands is GET's to say (docs/queues.md). Saying it here
      // too cost a post a third of its rate (a second statement, and the write that keeps a shown
      // position from rising), for a figure the poster reads again a second later.
      return engine.launch(run);
    },

    /** A queued run ends at once; a running one is told to stop and answered once it has (or after 5 s). */
    async cancel(principal: Principal, runId: string): Promise<RunView> {
      const { projectId } = principal;
      const status = await store.runStatus(projectId, runId);
      if (!status) throw errors.notFound('Run', runId);
      if (isFinalRunStatus(status)) throw errors.conflict(`Run ${runId} has already finished (${status})`, { status });
      if (status === 'queued' && (await store.cancelQueuedRun(runId, CANCELLED_BY_REQUEST)))
        return views.run(projectId, runId);
      // Claimed meanwhile, or running: the mark tells whichever process holds it, even past a lost notice.
      await store.requestCancel(runId);
      await engine.cancelInFlight(runId);
      return engine.awaitVerdict(projectId, runId, CANCEL_WAIT_MS);
    },

    /** Waits up to `ms` for the verdict; answers the run as it then is. */
    awaitVerdict: (principal: Principal, runId: string, ms: number): Promise<RunView> =>
      engine.awaitVerdict(principal.projectId, runId, ms),

    read: (principal: Principal, runId: string): Promise<RunView> => views.run(principal.projectId, runId),

    /** The run as GET /otp/runs/:id answers it: a finished run's JSON from memory when held. */
    readJson: (principal: Principal, runId: string) =>
      cache.read(principal.projectId, runId, () => views.run(principal.projectId, runId)),

    list: (principal: Principal, page: Parameters<RunViews['runs']>[1]) => views.runs(principal.projectId, page),

    /** The newest runs, for a page that shows a screenful. */
    latest: (principal: Principal, filter: RunFilter & { limit: number }) =>
      views.latestRuns(principal.projectId, filter),

    /** The run machine's transitions. */
    trace: (principal: Principal, runId: string): Promise<RunTrace> => engine.runTrace(principal.projectId, runId),
  };
}

export type RunCommands = ReturnType<typeof runCommands>;
