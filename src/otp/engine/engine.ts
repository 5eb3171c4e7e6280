// The OTP engine of one service process: its executor sessions, the runs they drive, and dispatch of
// queued runs. PostgreSQL is the coordination layer between processes (SKIP LOCKED claims, NOTIFY);
// every statement goes through the store (src/otp/store), so the engine holds no SQL of its own.
import type { Notice, Notifier } from '../../db/notifier.js';
import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import { errors } from '../../errors.js';
import { CloseCode, isFinalRunStatus, type SessionOutput } from '../../../machines/types.js';
import { ExecutorSession, type Connection } from './session.js';
import { RunDriver, type RunDriverDeps } from './run-driver.js';
import { planRun, type RunRequest } from './run-planner.js';
import type { RunView, RunViews } from '../store/run-views.js';
import type { ClaimedRun, RunStore } from '../store/run-store.js';
import type { StepWriter } from './step-writer.js';
import type { TestCaseSource } from './test-case-source.js';

export interface EngineDeps {
  /** Hooks other parts of the service give the run driver (evidence checks, test results). */
  runHooks?: Pick<RunDriverDeps, 'verifyEvidence' | 'onFinished'>;
  store: RunStore;
  /** What a run looks like over REST: the answer of a create or a cancel. */
  views: RunViews;
  writer: StepWriter;
  /** What runs are made of: test cases, plans and test runs (the artifacts room implements it). */
  testCases: TestCaseSource;
  /** Ids of every API key of a project, revoked ones too (the auth room's keyIdsOfProject). */
  projectKeyIds(projectId: string): Promise<string[]>;
  notifier?: Notifier;
  config: Config;
  instanceId: string;
  log: Logger;
}

const CANCEL_WAIT_MS = 5_000;

interface ClaimState {
  again: boolean;
  done: Promise<boolean>;
}

export class OtpEngine {
  private readonly sessions = new Map<string, ExecutorSession>();
  private readonly readyByProject = new Map<string, Set<ExecutorSession>>();
  private readonly runs = new Map<string, RunDriver>();
  private readonly claiming = new Map<ExecutorSession, ClaimState>();
  private readonly projectWakes = new Map<string, { again: boolean }>();
  private stopping = false;

  constructor(private readonly deps: EngineDeps) {}

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** A new socket whose key was accepted at the upgrade. */
  connect(principal: Principal, conn: Connection): ExecutorSession {
    const session = new ExecutorSession(principal, conn, {
      otp: this.deps.config.otp,
      store: this.deps.store,
      instanceId: this.deps.instanceId,
      log: this.deps.log,
      hooks: { ready: (s) => this.sessionReady(s), closed: (s, output) => this.sessionClosed(s, output) },
    });
    this.sessions.set(session.id, session);
    if (this.stopping) session.close(CloseCode.goingAway, 'service shutting down');
    return session;
  }

  // ---- REST-facing operations ------------------------------------------------------------------

  async createRun(principal: Principal, request: RunRequest): Promise<RunView> {
    if (request.sessionId) await this.checkSessionOpen(principal.projectId, request.sessionId);
    const run = await planRun(this.deps.testCases, principal, request, this.deps.config.otp);
    await this.deps.store.insertRun(run);
    const local = run.requestedSessionId ? this.sessions.get(run.requestedSessionId) : undefined;
    if (local) {
      // Pinned to a session of this process: no other process can take it, nothing to tell them.
      void this.claimFor(local);
    } else {
      if (!run.requestedSessionId) this.wakeProject(run.projectId);
      await this.notify({ kind: 'dispatch', projectId: run.projectId, ...(run.requestedSessionId ? { sessionId: run.requestedSessionId } : {}) });
    }
    return this.deps.views.run(principal.projectId, run.id);
  }

  async cancelRun(principal: Principal, runId: string): Promise<RunView> {
    const { store } = this.deps;
    const { projectId } = principal;
    const status = await store.runStatus(projectId, runId);
    if (!status) throw errors.notFound('Run', runId);
    if (isFinalRunStatus(status)) {
      throw errors.conflict(`Run ${runId} has already finished (${status})`, { status });
    }
    if (status === 'queued' && (await store.cancelQueuedRun(runId, 'cancelled by request'))) {
      return this.deps.views.run(projectId, runId);
    }
    // Claimed meanwhile, or running: the mark tells whichever process holds it, even past a lost notice.
    await store.requestCancel(runId);
    const driver = this.runs.get(runId);
    if (driver) {
      driver.cancel();
      await Promise.race([driver.done.catch(() => {}), new Promise((r) => setTimeout(r, CANCEL_WAIT_MS).unref())]);
    } else {
      // Another process holds the run: it hears the notice and finishes the run; wait for the verdict.
      await this.notify({ kind: 'cancel', runId });
      const deadline = Date.now() + CANCEL_WAIT_MS;
      while (Date.now() < deadline) {
        const now = await store.runStatus(projectId, runId);
        if (!now || isFinalRunStatus(now)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return this.deps.views.run(projectId, runId);
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
      if (session) void this.claimFor(session);
      else if (!notice.sessionId) this.wakeProject(notice.projectId);
    } else if (notice.kind === 'cancel') {
      this.runs.get(notice.runId)?.cancel();
    } else if (notice.kind === 'revoke') {
      void this.revokeKey(notice.keyId, false);
    }
  }

  /**
   * The safety net behind notices: claims runs that wait for local sessions and applies cancels asked
   * of local runs, whatever notice may have been missed. Called on every heartbeat.
   */
  async reconcile(): Promise<void> {
    if (this.stopping) return;
    const { store } = this.deps;
    for (const waiting of await store.queuedDemand()) {
      if (waiting.sessionId) {
        const session = this.sessions.get(waiting.sessionId);
        if (session) void this.claimFor(session);
      } else if (this.readyByProject.has(waiting.projectId)) {
        this.wakeProject(waiting.projectId);
      }
    }
    for (const id of await store.cancelRequestedRunIds(this.deps.instanceId)) this.runs.get(id)?.cancel();
  }

  /** SIGTERM: runs in flight end as `error`, sockets close with 1001. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    const drivers = [...this.runs.values()];
    for (const driver of drivers) driver.executorLost('service shutting down');
    await Promise.race([
      Promise.allSettled(drivers.map((d) => d.done)),
      new Promise((r) => setTimeout(r, CANCEL_WAIT_MS).unref()),
    ]);
    for (const session of this.sessions.values()) session.close(CloseCode.goingAway, 'service shutting down');
  }

  // ---- dispatch --------------------------------------------------------------------------------

  private sessionReady(session: ExecutorSession): void {
    const set = this.readyByProject.get(session.principal.projectId) ?? new Set();
    set.add(session);
    this.readyByProject.set(session.principal.projectId, set);
    void this.claimFor(session);
  }

  private sessionClosed(session: ExecutorSession, output: SessionOutput): void {
    this.sessions.delete(session.id);
    const set = this.readyByProject.get(session.principal.projectId);
    set?.delete(session);
    if (set?.size === 0) this.readyByProject.delete(session.principal.projectId);
    for (const driver of session.runs.values()) driver.executorLost(`executor connection lost (${output.reason})`);
    this.deps.store
      .closeSession(session.id, output.code, output.reason)
      .catch((err) => this.deps.log.error('could not record a closed session', { sessionId: session.id, err }));
    this.deps.log.debug('session closed', { sessionId: session.id, ...output });
  }

  /**
   * Claims queued runs for one session until it is full or nothing waits for it, one claim at a time
   * per session. Resolves true when the queue ran dry (so other sessions need not ask).
   */
  private claimFor(session: ExecutorSession): Promise<boolean> {
    const running = this.claiming.get(session);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state: ClaimState = { again: false, done: Promise.resolve(false) };
    this.claiming.set(session, state);
    state.done = (async () => {
      let drained = false;
      try {
        do {
          state.again = false;
          while (!this.stopping && session.freeCapacity > 0) {
            const wanted = session.freeCapacity;
            const claimed = await this.deps.store.claimRuns(
              { id: session.id, projectId: session.principal.projectId },
              this.deps.instanceId,
              wanted,
            );
            for (const run of claimed) await this.startRun(run, session);
            drained = claimed.length < wanted;
            if (drained) break;
          }
        } while (state.again && !this.stopping);
      } catch (err) {
        this.deps.log.error('dispatch failed', { sessionId: session.id, err });
      } finally {
        this.claiming.delete(session);
      }
      return drained;
    })();
    return state.done;
  }

  /** A run for any session of the project: offer it to the local sessions with the most room first. */
  private wakeProject(projectId: string): void {
    const state = this.projectWakes.get(projectId);
    if (state) {
      state.again = true;
      return;
    }
    const mine = { again: false };
    this.projectWakes.set(projectId, mine);
    void (async () => {
      try {
        do {
          mine.again = false;
          const sessions = [...(this.readyByProject.get(projectId) ?? [])]
            .filter((s) => s.freeCapacity > 0)
            .sort((a, b) => b.freeCapacity - a.freeCapacity);
          for (const session of sessions) {
            if (this.stopping || (await this.claimFor(session))) break;
          }
        } while (mine.again && !this.stopping);
      } finally {
        this.projectWakes.delete(projectId);
      }
    })();
  }

  private async startRun(run: ClaimedRun, session: ExecutorSession): Promise<void> {
    if (session.closed || this.stopping) {
      // The session went away while the claim was in flight.
      await this.deps.store.finishOrphanedRuns([run.id], {
        status: 'error',
        code: 'E_INTERNAL',
        reason: 'executor session closed before the run started',
      });
      return;
    }
    const { otp } = this.deps.config;
    const driver = new RunDriver(
      run,
      session,
      {
        store: this.deps.store,
        writer: this.deps.writer,
        log: this.deps.log,
        graceMs: otp.stepGraceMs,
        stepTimeoutMs: otp.stepTimeoutMs,
        ...this.deps.runHooks,
      },
      session.capabilities as Record<string, unknown>,
    );
    session.runs.set(run.id, driver);
    this.runs.set(run.id, driver);
    driver.done
      .catch(() => {})
      .finally(() => {
        session.runs.delete(run.id);
        this.runs.delete(run.id);
        if (!session.closed) void this.claimFor(session);
      });
    driver.start();
  }

  private async checkSessionOpen(projectId: string, sessionId: string): Promise<void> {
    const status = await this.deps.store.sessionStatus(projectId, sessionId);
    if (!status) throw errors.notFound('Session', sessionId);
    if (status !== 'open') throw errors.conflict(`Session ${sessionId} is closed`, { sessionId });
  }

  private async notify(notice: Notice): Promise<void> {
    await this.deps.notifier?.notify(notice).catch((err) => this.deps.log.error('notify failed', { err }));
  }
}
