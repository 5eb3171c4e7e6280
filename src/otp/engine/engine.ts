// The OTP engine of one service process: its executor sessions, the runs they drive, and dispatch of
// queued runs. PostgreSQL is the coordination layer between processes (SKIP LOCKED claims, NOTIFY);
// every statement goes through the store (src/otp/store), so the engine holds no SQL of its own.
//
// The engine builds its parts from the bottom up, each given only what lies below it; each subscribes
// to the events of the parts below (and to the notices of other processes) that it cares about, where
// it is built here. No part is lent a callback into the engine:
//   SessionRegistry (sessions.ts)   the sessions of this process; the connection switch
//   RunDrivers (drivers.ts)         the runs they drive; cancels
//   Dispatch (dispatch.ts)          where a run goes: started here or queued; who hears of it; claims
//   Recordings (recordings.ts)      recording frames and REST
//   SessionTransfers (transfers.ts) sessions moving to and from other processes
//   RunWatch (run-watch.ts)         what the console watches; the trace flush
//   Shutdown (shutdown.ts)          draining and stopping

import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { Notices } from '../../db/notifier.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { NewRun, RunStore } from '../store/run-store.js';
import type { RunTrace, RunTraceStore } from '../store/run-trace.js';
import { newRunView, type RunView, type RunViews } from '../store/run-views.js';
import type { SessionTransferStore } from '../store/session-transfer.js';
import type { EngineEvents } from './diagnostics.js';
import { Dispatch } from './dispatch.js';
import { RunDrivers } from './drivers.js';
import { Phase } from './phase.js';
import { Recordings } from './recordings.js';
import type { RunDriverDeps } from './run-driver.js';
import { RunWatch } from './run-watch.js';
import type { Connection, ExecutorSession } from './session.js';
import { SessionRegistry } from './sessions.js';
import { Shutdown } from './shutdown.js';
import type { TestCaseSink } from './test-case-source.js';
import { SessionTransfers } from './transfers.js';

export interface EngineDeps {
  /** Hooks other parts of the service give the run driver (evidence checks, test results). */
  runHooks?: Pick<RunDriverDeps, 'verifyEvidence' | 'onFinished'>;
  store: RunStore;
  /** What a run looks like over REST: the answer of a create or a cancel. */
  views: RunViews;
  /** Where recordings become test cases (the artifacts room implements it). */
  testCaseSink: TestCaseSink;
  recordingStore: RecordingStore;
  /** Ids of every API key of a project, revoked ones too (the auth room's keyIdsOfProject). */
  projectKeyIds(projectId: string): Promise<string[]>;
  /** Notices to and from the other processes; none: a process alone. */
  notices?: Notices;
  /** Where the run machine's transitions are kept (flushed every config.otp.traceFlushMs); none: memory only. */
  traces?: RunTraceStore;
  /** Moving sessions between processes (hello.resumeSessionId of a session another process holds). */
  transferStore: SessionTransferStore;
  /** How many other service processes are alive (to take over the runs of a draining one). */
  livePeers?: () => Promise<number>;
  /** Whether another process heart-beat lately (a holder slow to acknowledge a transfer is not gone). */
  holderBeats?: (instanceId: string) => Promise<boolean>;
  config: Config;
  /** The service's HTTP base address told to executors in welcome.apiUrl (PUBLIC_URL or the REST listener). */
  apiUrl?(): string | undefined;
  instanceId: string;
  log: Logger;
  /** Metrics of this process. */
  events?: EngineEvents;
  /** Where writes that meet a database outage wait (runs hold, hellos are refused as retryable). */
  health?: DatabaseHealth;
}

export class OtpEngine {
  private readonly phase = new Phase();
  private readonly sessions: SessionRegistry;
  private readonly drivers: RunDrivers;
  private readonly dispatch: Dispatch;
  /** Recordings made on this process's sessions, and the REST side of every recording. */
  readonly recordings: Recordings;
  /** What the console watches: transitions, traces, a session's liveness. */
  readonly watch: RunWatch;
  private readonly shutdowns: Shutdown;

  constructor(private readonly deps: EngineDeps) {
    const { store, config, log, notices, instanceId, health, events } = deps;
    const { phase } = this;
    const sessions = new SessionRegistry({
      config,
      apiUrl: deps.apiUrl,
      store,
      instanceId,
      log,
      phase,
      notices,
      events,
      health,
    });
    const drivers = new RunDrivers({ store, config, log, sessions, notices, runHooks: deps.runHooks, events, health });
    this.sessions = sessions;
    this.drivers = drivers;
    this.dispatch = new Dispatch({ store, instanceId, log, phase, sessions, drivers, notices });
    this.recordings = new Recordings({
      store: deps.recordingStore,
      runs: store,
      sink: deps.testCaseSink,
      maxEvents: config.otp.maxSteps,
      sessions,
      notices,
      log,
      health,
    });
    new SessionTransfers({
      instanceId,
      store: deps.transferStore,
      runs: store,
      log,
      sessions,
      drivers,
      notices,
      holderBeats: deps.holderBeats,
    });
    const { traces } = deps;
    this.watch = new RunWatch({
      drivers,
      sessions,
      store,
      views: deps.views,
      traces,
      log,
      traceFlushMs: config.otp.traceFlushMs,
    });
    this.shutdowns = new Shutdown({ phase, sessions, drivers, config, log, livePeers: deps.livePeers });
    // Back after a lost connection: look now for the runs and cancels a missed notice would have announced.
    notices?.onReconnected(() => this.reconcile().catch((err) => log.error('reconcile failed', { err })));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Runs this process drives now. */
  get activeRuns(): number {
    return this.drivers.size;
  }

  /** True while this process has a live driver for the run (the orphan check asks). */
  drives(runId: string): boolean {
    return this.drivers.get(runId) !== undefined;
  }

  /** True from SIGTERM on: no run is claimed any more (/readyz reads the kernel's Lifecycle, set at the same moment). */
  get draining(): boolean {
    return this.phase.draining;
  }

  /** A new socket whose key was accepted at the upgrade. */
  connect(principal: Principal, conn: Connection): ExecutorSession {
    return this.sessions.connect(principal, conn);
  }

  // ---- the live part of the run commands (src/otp/runs/commands.ts, RunEngine) --------------------

  /** Writes a planned run: started at once on a session of this process with room, else queued (Dispatch). */
  async launch(run: NewRun): Promise<RunView> {
    // As inserted (queued, or started here): GET /otp/runs/:id follows it from there.
    return newRunView(await this.dispatch.launch(run), run.steps);
  }

  /** The run's driver is told to cancel: here, or (by notice) on the process that holds it. */
  cancelInFlight(runId: string): Promise<void> {
    return this.drivers.cancel(runId);
  }

  /** 404 for a session the project does not have, 409 for a closed one. */
  async ensureSessionOpen(projectId: string, sessionId: string): Promise<void> {
    // Welcomed here and attached: open (its row was written before its welcome), no need to ask.
    const local = this.sessions.get(sessionId);
    if (local?.ready && !local.closed && local.principal.projectId === projectId) return;
    const status = await this.deps.store.sessionStatus(projectId, sessionId);
    if (!status) throw errors.notFound('Session', sessionId);
    if (status !== 'open') throw errors.conflict(`Session ${sessionId} is closed`, { sessionId });
  }

  /**
   * Waits up to `ms` for a run's verdict: on its driver when this process holds it, otherwise by
   * reading its status (another process may hold it, or it waits queued). Answers the run either way.
   */
  awaitVerdict(projectId: string, runId: string, ms: number): Promise<RunView> {
    return this.watch.awaitVerdict(projectId, runId, ms);
  }

  runTrace(projectId: string, runId: string): Promise<RunTrace> {
    return this.watch.runTrace(projectId, runId);
  }

  /** Closes at once every open session of a revoked key, here and (by notice) in other processes. */
  async revokeKey(keyId: string): Promise<void> {
    this.sessions.closeKey(keyId);
    await this.deps.notices
      ?.notify({ kind: 'revoke', keyId })
      .catch((err) => this.deps.log.error('notify failed', { err }));
  }

  /**
   * A project archived or deleted: every executor session of its keys closes (here and, by notice,
   * elsewhere) and its queued runs are cancelled. Runs in flight end as `error` with their session.
   */
  async closeProject(projectId: string, reason: string): Promise<void> {
    const { store } = this.deps;
    for (const keyId of await this.deps.projectKeyIds(projectId)) await this.revokeKey(keyId);
    for (const runId of await store.queuedRunIds(projectId)) await store.cancelQueuedRun(runId, reason);
  }

  /**
   * The safety net behind notices: claims runs that wait for local sessions and applies cancels asked
   * of local runs, whatever notice may have been missed. Called on a timer of its own (every
   * HEARTBEAT_MS, src/composition/otp.ts) and when the notice connection comes back; resolves once
   * the claims it asked for are done.
   */
  async reconcile(): Promise<void> {
    if (this.phase.draining) return;
    await this.dispatch.reconcile();
    const { store, instanceId } = this.deps;
    for (const id of await store.cancelRequestedRunIds(instanceId)) this.drivers.get(id)?.cancel();
  }

  /** SIGTERM, first half (see Shutdown.drain); the caller then stops listening for new sockets. */
  drain(): Promise<void> {
    return this.shutdowns.drain();
  }

  /** SIGTERM, second half (see Shutdown.finish): transfers, then the rest ends as `error`, sockets 1001. */
  shutdown(): Promise<void> {
    this.watch.stop();
    return this.shutdowns.finish();
  }

  /** A second SIGINT/SIGTERM: stop waiting (drain, transfers); runs still here end as `error`. */
  hurryShutdown(): void {
    this.shutdowns.hurry();
  }
}
