// The OTP engine of one service process: its executor sessions, the runs they drive, and dispatch of
// queued runs. PostgreSQL is the coordination layer between processes (SKIP LOCKED claims, NOTIFY);
// every statement goes through the store (src/otp/store), so the engine holds no SQL of its own.

import { CloseCode, OtpErrorCode, type SessionOutput, type StepOutcome } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { Notice, Notifier } from '../../db/notifier.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { ClaimedRun, NewRun, RunStore } from '../store/run-store.js';
import type { RunTrace, RunTraceStore } from '../store/run-trace.js';
import { newRunView, type RunView, type RunViews } from '../store/run-views.js';
import type { AdoptedRun, ResumableSession, SessionHandOverStore } from '../store/session-handover.js';
import type { EngineEvents } from './diagnostics.js';
import { Dispatch } from './dispatch.js';
import { HandOvers } from './handover.js';
import { Recordings } from './recordings.js';
import { RunDriver, type RunDriverDeps } from './run-driver.js';
import { RunWatch } from './run-watch.js';
import { type Connection, ExecutorSession } from './session.js';
import { Shutdown } from './shutdown.js';
import type { TestCaseSink } from './test-case-source.js';
import { TimerWheel } from './timer-wheel.js';

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
  notifier?: Notifier;
  /** Where the run machine's transitions are kept (flushed every config.otp.traceFlushMs); none: memory only. */
  traces?: RunTraceStore;
  /** Moving sessions between processes (hello.resumeSessionId of a session another process holds). */
  handOverStore: SessionHandOverStore;
  /** How many other service processes are alive (to take over the runs of a draining one). */
  livePeers?: () => Promise<number>;
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
  private readonly sessions = new Map<string, ExecutorSession>();
  private readonly runs = new Map<string, RunDriver>();
  // Every run's step time-outs, on one wheel (timer-wheel.ts).
  private readonly clock = new TimerWheel(10, (err) => this.deps.log.error('step time-out failed', { err }));
  private readonly dispatch: Dispatch;
  /** Recordings made on this process's sessions, and the REST side of every recording. */
  readonly recordings: Recordings;
  /** What the console watches: transitions, traces, a session's liveness. */
  readonly watch: RunWatch;
  private readonly wasReady = new Set<ExecutorSession>();
  private readonly handOvers: HandOvers;
  private readonly shutdowns: Shutdown;

  constructor(private readonly deps: EngineDeps) {
    this.dispatch = new Dispatch({
      store: deps.store,
      instanceId: deps.instanceId,
      log: deps.log,
      draining: () => this.isDraining,
      start: (run, session) => this.startRun(run, session),
    });
    this.recordings = new Recordings({
      store: deps.recordingStore,
      runs: deps.store,
      sink: deps.testCaseSink,
      maxEvents: deps.config.otp.maxSteps,
      localSession: (id) => this.sessions.get(id),
      notify: (notice) => this.notify(notice),
      log: deps.log,
      health: deps.health,
    });
    this.watch = new RunWatch({ runs: this.runs, sessions: this.sessions, store: deps.store, views: deps.views, traces: deps.traces, log: deps.log, traceFlushMs: deps.config.otp.traceFlushMs });
    this.shutdowns = new Shutdown({ sessions: this.sessions, runs: this.runs, config: deps.config, log: deps.log, livePeers: deps.livePeers });
    this.handOvers = new HandOvers({
      instanceId: deps.instanceId,
      store: deps.handOverStore,
      log: deps.log,
      sessions: this.sessions,
      notify: (notice) => this.notify(notice),
      release: (driver) => this.runs.delete(driver.id),
      adopt: (greeter, session, runs, ref) => this.adopt(greeter, session, runs, ref),
      abandon: async (sessionId, runIds) => {
        const reason = 'executor connection lost while its session moved to this process';
        await deps.store.finishUndriven(runIds, { status: 'error', code: OtpErrorCode.internal, reason });
        await deps.store.closeSession(sessionId, CloseCode.goingAway, reason);
      },
    });
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Runs this process drives now. */
  get activeRuns(): number {
    return this.runs.size;
  }

  /** True while this process has a live driver for the run (the orphan check asks). */
  drives(runId: string): boolean {
    return this.runs.has(runId);
  }

  /** True from SIGTERM on: no run is claimed any more (/readyz reads the kernel's Lifecycle, set at the same moment). */
  get draining(): boolean {
    return this.shutdowns.draining;
  }

  private get isDraining(): boolean {
    return this.shutdowns.draining;
  }

  /** A new socket whose key was accepted at the upgrade. */
  connect(principal: Principal, conn: Connection): ExecutorSession {
    const session = new ExecutorSession(principal, conn, {
      otp: this.deps.config.otp,
      apiUrl: () => this.deps.apiUrl?.(),
      store: this.deps.store,
      instanceId: this.deps.instanceId,
      log: this.deps.log,
      unavailable: (err) => this.deps.health?.report(err) ?? false,
      hooks: {
        ready: (s) => this.sessionReady(s),
        detached: (s) => this.sessionDetached(s),
        resume: (greeter, sessionId, ref) => this.resumeSession(greeter, sessionId, ref),
        closed: (s, output) => this.sessionClosed(s, output),
        recording: (s, type, payload, ref) => this.recordings.frame(s, type, payload, ref),
      },
    });
    this.sessions.set(session.id, session);
    if (this.shutdowns.stopping) session.close(CloseCode.goingAway, 'service shutting down');
    return session;
  }

  // ---- the live part of the run commands (src/otp/runs/commands.ts, RunEngine) --------------------

  /** Writes a planned run: claimed by a session of this process with room and started at once, else queued. */
  async launch(run: NewRun): Promise<RunView> {
    const local = run.requestedSessionId ? this.sessions.get(run.requestedSessionId) : undefined;
    // A session here with room: the insert writes the run claimed by it, and it starts at once.
    const slot = run.requestedSessionId && !local ? undefined : await this.dispatch.reserve(run.projectId, local ?? null);
    let row: Record<string, unknown>;
    try {
      row = await this.deps.store.insertRun(run, slot && { sessionId: slot.id, instanceId: this.deps.instanceId });
      if (slot && row.status === 'running') await this.startRun(run, slot);
    } finally {
      if (slot) this.dispatch.unreserve(slot);
    }
    // As inserted (queued, or started here): GET /otp/runs/:id follows it from there.
    if (row.status === 'running') return newRunView(row, run.steps);
    // Pinned to a session of this process: no other process can take it, nothing to tell them.
    if (local) void this.dispatch.claimFor(local);
    else {
      if (!run.requestedSessionId) this.dispatch.wakeProject(run.projectId);
      await this.notify({ kind: 'dispatch', projectId: run.projectId, ...(run.requestedSessionId ? { sessionId: run.requestedSessionId } : {}) });
    }
    return newRunView(row, run.steps);
  }

  /** The run's driver is told to cancel: here, or (by notice) on the process that holds it. */
  async cancelInFlight(runId: string): Promise<void> {
    const driver = this.runs.get(runId);
    if (driver) driver.cancel();
    else await this.notify({ kind: 'cancel', runId });
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
  async revokeKey(keyId: string, broadcast = true): Promise<void> {
    for (const session of this.sessions.values()) {
      if (session.principal.keyId === keyId) session.close(CloseCode.unauthorized, 'API key revoked');
    }
    if (broadcast) await this.notify({ kind: 'revoke', keyId });
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

  /** Notices from other processes. */
  handleNotice(notice: Notice): void {
    if (notice.kind === 'dispatch') {
      const session = notice.sessionId ? this.sessions.get(notice.sessionId) : undefined;
      if (session) void this.dispatch.claimFor(session);
      else if (!notice.sessionId) this.dispatch.wakeProject(notice.projectId);
    } else if (notice.kind === 'cancel') {
      this.runs.get(notice.runId)?.cancel();
    } else if (notice.kind === 'revoke') {
      void this.revokeKey(notice.keyId, false);
    } else if (notice.kind === 'record') {
      this.recordings.deliver(notice);
    } else if (notice.kind === 'handoff' || notice.kind === 'handed-off') {
      this.handOvers.handleNotice(notice);
    }
  }

  /**
   * The safety net behind notices: claims runs that wait for local sessions and applies cancels asked
   * of local runs, whatever notice may have been missed. Called on a timer of its own (every
   * HEARTBEAT_MS, src/service.ts) and when the notice connection comes back.
   */
  async reconcile(): Promise<void> {
    if (this.isDraining) return;
    const { store } = this.deps;
    for (const waiting of await store.queuedDemand()) {
      if (waiting.sessionId) {
        const session = this.sessions.get(waiting.sessionId);
        if (session) void this.dispatch.claimFor(session);
      } else if (this.dispatch.serves(waiting.projectId)) {
        this.dispatch.wakeProject(waiting.projectId);
      }
    }
    for (const id of await store.cancelRequestedRunIds(this.deps.instanceId)) this.runs.get(id)?.cancel();
  }

  /** SIGTERM, first half (see Shutdown.drain); the caller then stops listening for new sockets. */
  drain(): Promise<void> {
    return this.shutdowns.drain();
  }

  /** SIGTERM, second half (see Shutdown.finish): hand-overs, then the rest ends as `error`, sockets 1001. */
  shutdown(): Promise<void> {
    this.watch.stop();
    return this.shutdowns.finish();
  }

  /** A second SIGINT/SIGTERM: stop waiting (drain, hand-overs); runs still here end as `error`. */
  hurryShutdown(): void {
    this.shutdowns.hurry();
  }

  // ---- dispatch --------------------------------------------------------------------------------

  private sessionReady(session: ExecutorSession): void {
    const { principal } = session;
    // Called again when a detached session is resumed: it opened once.
    if (!this.wasReady.has(session)) {
      this.wasReady.add(session);
      this.deps.log.info('session opened', { sessionId: session.id, projectId: principal.projectId, keyId: principal.keyId, maxParallel: session.maxParallel });
      this.deps.events?.sessionOpened();
    }
    this.dispatch.ready(session);
  }

  private sessionDetached(session: ExecutorSession): void {
    this.dispatch.gone(session);
  }

  /**
   * hello.resumeSessionId on a new connection: the session, if this process holds it, is resumed on
   * that connection (only by a key of the same project); otherwise the hello is refused.
   */
  private resumeSession(greeter: ExecutorSession, sessionId: string, ref: string): void {
    const target = this.sessions.get(sessionId);
    if (target && target !== greeter && target.resumable && target.principal.projectId === greeter.principal.projectId) {
      this.sessions.delete(greeter.id);
      greeter.handOver(target, ref);
      return;
    }
    if (target || this.isDraining) return greeter.refuseResume(sessionId, ref);
    // Perhaps another process holds it (the executor reconnected through a load balancer).
    void this.handOvers.requestFromPeer(greeter, sessionId, ref);
  }

  /** A session another process handed over: `greeter` becomes it and drives its runs on from where they were. */
  private adopt(greeter: ExecutorSession, session: ResumableSession, runs: AdoptedRun[], ref: string): void {
    this.sessions.delete(greeter.id);
    const drivers = runs.map((run) => this.driverFor(run, greeter));
    greeter.adopt(session, ref, () => {
      for (const driver of drivers) driver.start();
    });
    this.sessions.set(greeter.id, greeter);
    this.deps.log.info('session taken over from another process', { sessionId: greeter.id, runs: runs.length });
  }

  private sessionClosed(session: ExecutorSession, output: SessionOutput): void {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    this.sessionDetached(session);
    this.shutdowns.sessionGone();
    // Sessions that never got their welcome (refused, hello missing) were not counted as opened.
    if (this.wasReady.delete(session)) this.deps.events?.sessionClosed(output.code);
    this.deps.log.info('session closed', { sessionId: session.id, projectId: session.principal.projectId, code: output.code, reason: output.reason, ...(session.handedOver ? { handedOver: true } : {}) });
    // Handed over: another process holds the session's row and runs now.
    if (session.handedOver) return;
    for (const driver of session.runs.values()) driver.executorLost(`executor connection lost (${output.reason})`);
    // The recording in progress keeps its steps (as a test case) before the session is marked closed.
    this.recordings
      .sessionClosed(session)
      .catch((err) => this.deps.log.error('could not stop the recording of a closed session', { sessionId: session.id, err }))
      .then(() => this.deps.store.closeSession(session.id, output.code, output.reason))
      .catch((err) => this.deps.log.error('could not record a closed session', { sessionId: session.id, err }));
  }

  private async startRun(run: ClaimedRun, session: ExecutorSession): Promise<void> {
    if (session.closed || this.shutdowns.stopping) {
      // The session went away (closed, or handed to another process by a drain) or the process
      // stopped while the claim was in flight: nothing was sent, so the run goes back to the queue for
      // another session (or process) to claim. A run claimed as the drain began on a session still
      // here starts: the drain lets it finish or hands it over with its session.
      const requeued = await this.deps.store.requeueUnstarted(run.id, this.deps.instanceId);
      if (requeued) {
        this.deps.log.info('run claimed as its session left: back in the queue', { runId: run.id, sessionId: session.id });
        if (!this.shutdowns.stopping && !requeued.sessionId) this.dispatch.wakeProject(requeued.projectId);
        await this.notify({ kind: 'dispatch', projectId: requeued.projectId, ...(requeued.sessionId ? { sessionId: requeued.sessionId } : {}) });
        return;
      }
      await this.deps.store.finishUndriven([run.id], {
        status: 'error',
        code: OtpErrorCode.internal,
        reason: 'executor session closed before the run started',
      });
      return;
    }
    this.driverFor(run, session).start();
  }

  /** The driver of a run on a session, registered; the caller starts it. */
  private driverFor(run: ClaimedRun & { recorded?: StepOutcome[]; attempts?: number[] }, session: ExecutorSession): RunDriver {
    const { otp } = this.deps.config;
    const driver = new RunDriver(
      run,
      session,
      {
        store: this.deps.store,
        log: this.deps.log,
        graceMs: otp.stepGraceMs,
        stepTimeoutMs: otp.stepTimeoutMs,
        clock: this.clock,
        changed: (id, projectId) => this.watch.changed(id, projectId),
        health: this.deps.health,
        outageWindowMs: otp.outageWindowMs,
        ...this.deps.runHooks,
      },
      session.capabilities as Record<string, unknown>,
    );
    session.runs.set(run.id, driver);
    this.runs.set(run.id, driver);
    const { log, events } = this.deps;
    log.info('run claimed', { runId: run.id, sessionId: session.id, projectId: run.projectId, steps: run.steps.length });
    events?.runClaimed();
    driver.done
      .then((output) => {
        log.info('run finished', { runId: run.id, sessionId: session.id, status: output.status, ...output.counts, durationMs: driver.durationMs, ...(output.reason ? { reason: output.reason } : {}) });
        events?.runFinished(output.status, driver.durationMs);
      })
      .catch(() => {})
      .finally(() => {
        session.runs.delete(run.id);
        if (this.runs.get(run.id) === driver) this.runs.delete(run.id);
        if (!session.closed && !driver.released) this.dispatch.runEnded(session);
      });
    return driver;
  }

  private async notify(notice: Notice): Promise<void> {
    await this.deps.notifier?.notify(notice).catch((err) => this.deps.log.error('notify failed', { err }));
  }
}
