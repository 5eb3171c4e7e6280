// Dispatch: where a run goes, from its POST to the session that drives it (docs/architecture.md, "The
// way of a new run"). It owns the queue decision: a new run starts at once on a session of this
// process with room (a slot reserved before its insert, which writes it claimed), or waits queued;
// and who hears of a run that waits (`queued`: the sessions of this process that may take it, and the
// other processes by notice). A session that may take a waiting run claims it, one claim at a time
// per session (the claims of a project's sessions asked together share one statement), a project's
// run offered to its sessions with the most room first; a run claimed by a session that left goes
// back to the queue.
import { OtpErrorCode } from '../../../machines/types.js';
import type { Notices } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import type { ClaimedRun, NewRun, RunStore } from '../store/run-store.js';
import type { RunRow } from '../store/view-rows.js';
import { ClaimBatches } from './claim-batches.js';
import { type RunClaimMessage, runClaim } from './diagnostics.js';
import type { RunDrivers } from './drivers.js';
import type { Phase } from './phase.js';
import type { ExecutorSession } from './session.js';
import type { SessionRegistry } from './sessions.js';

export interface DispatchDeps {
  store: RunStore;
  instanceId: string;
  log: Logger;
  /** Where the process is in its stop: nothing is claimed once it drains, nothing started once it stops. */
  phase: Phase;
  sessions: SessionRegistry;
  drivers: RunDrivers;
  notices?: Notices;
}

interface ClaimState {
  again: boolean;
  done: Promise<boolean>;
}

export class Dispatch {
  private readonly readyByProject = new Map<string, Set<ExecutorSession>>();
  private readonly claiming = new Map<ExecutorSession, ClaimState>();
  private readonly projectWakes = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly reserved = new Map<ExecutorSession, number>();
  // What this process has heard of queued runs, so that a run's end asks PostgreSQL only when a run
  // may wait for its session (most runs start from their POST, and the claim after their end would
  // find nothing). Every sign of a queued run (a run queued here, a dispatch notice, a requeue, the
  // reconcile, a session ready) is numbered and kept against its session, or its project when it is
  // for any session; a claim that found the queue dry settles its session at the number it read
  // before asking. A notice missed in a lost connection is made up by the reconcile that follows it.
  private heard = 0;
  private readonly heardForProject = new Map<string, number>();
  private readonly heardForSession = new WeakMap<ExecutorSession, number>();
  private readonly settled = new WeakMap<ExecutorSession, number>();
  // The newest number at which a claim of the project found its queue dry: a new session (no run can
  // be pinned to it yet) can take only what that claim could, so it claims only after a later sign.
  // A connect storm of one project then asks PostgreSQL once, not once per batch of welcomes.
  private readonly dryForProject = new Map<string, number>();
  private readonly batches: ClaimBatches;

  constructor(private readonly deps: DispatchDeps) {
    this.batches = new ClaimBatches((projectId, asks) => deps.store.claimRunsFor(projectId, asks, deps.instanceId));
    deps.sessions.on('ready', (session, fresh) => this.ready(session, fresh));
    deps.sessions.on('detached', (session) => this.gone(session));
    deps.sessions.on('closed', (session) => this.gone(session));
    deps.drivers.on('ended', (driver, session) => {
      if (!session.closed && !driver.released) this.runEnded(session);
    });
    deps.notices?.on('dispatch', (notice) => void this.waiting(notice.projectId, notice.sessionId));
  }

  // ---- the way of a new run ----------------------------------------------------------------------

  /**
   * POST /otp/runs, once planned: the run is inserted claimed by a session of this process with room
   * (the one it is pinned to, or the project's with the most room) and started at once; otherwise it
   * is inserted queued and those who may take it hear of it. Answers the row as inserted.
   */
  async launch(run: NewRun): Promise<RunRow> {
    const pinned = run.requestedSessionId;
    const local = pinned ? this.deps.sessions.get(pinned) : undefined;
    // Pinned to a session another process holds: it cannot start here.
    const slot = pinned && !local ? undefined : await this.reserve(run.projectId, local ?? null);
    let row: RunRow;
    try {
      const claim = slot && { sessionId: slot.id, instanceId: this.deps.instanceId };
      row = await this.deps.store.insertRun(run, claim);
      if (slot && row.status === 'running') await this.start(run, slot);
    } finally {
      if (slot) this.unreserve(slot);
    }
    if (row.status !== 'running') await this.queued(run.projectId, pinned ?? undefined);
    return row;
  }

  /** A claimed run, on the session that claimed it: started, unless the session left or the process stops. */
  private async start(run: ClaimedRun, session: ExecutorSession): Promise<void> {
    if (!session.closed && !this.deps.phase.stopping) return void this.deps.drivers.drive(run, session).start();
    // The session went away (closed, or transferred to another process by a drain) or the process
    // stopped while the claim was in flight: nothing was sent, so the run goes back to the queue for
    // another session (or process) to claim. A run claimed as the drain began on a session still
    // here starts: the drain lets it finish or transfers it with its session.
    const { store, instanceId, log } = this.deps;
    const requeued = await store.requeueUnstarted(run.id, instanceId);
    if (!requeued) {
      const reason = 'executor session closed before the run started';
      return void (await store.finishUndriven([run.id], { status: 'error', code: OtpErrorCode.internal, reason }));
    }
    log.info('run claimed as its session left: back in the queue', { runId: run.id, sessionId: session.id });
    await this.queued(requeued.projectId, requeued.sessionId ?? undefined);
  }

  /**
   * A run was queued (new, or back in the queue): for `sessionId`, or for any session of the project.
   * The sessions of this process that may take it claim; the other processes hear of it by notice,
   * unless it is pinned to a session of this one (no other process can take it).
   */
  private async queued(projectId: string, sessionId?: string): Promise<void> {
    void this.waiting(projectId, sessionId);
    if (sessionId && this.deps.sessions.get(sessionId)) return;
    await this.deps.notices
      ?.notify({ kind: 'dispatch', projectId, ...(sessionId ? { sessionId } : {}) })
      .catch((err) => this.deps.log.error('notify failed', { err }));
  }

  /**
   * A run waits in the queue for `sessionId`, or for any session of the project: the sessions of
   * this process that may take it claim (the one rule for a run queued here, a notice, a requeue and
   * the reconcile). Resolves once their claims are done.
   */
  waiting(projectId: string, sessionId?: string): Promise<unknown> {
    if (!sessionId) return this.wakeProject(projectId);
    const session = this.deps.sessions.get(sessionId);
    return session ? this.claimFor(session) : Promise.resolve();
  }

  /**
   * The safety net behind notices: claims the runs that wait for sessions of this process, whatever
   * notice may have been missed. Resolves once those claims are done.
   */
  async reconcile(): Promise<void> {
    if (this.deps.phase.draining) return;
    const demand = await this.deps.store.queuedDemand();
    await Promise.all(demand.map((waiting) => this.waiting(waiting.projectId, waiting.sessionId ?? undefined)));
  }

  // ---- sessions ----------------------------------------------------------------------------------

  /** A session got its welcome (`fresh`: its first) or was resumed: it takes runs from now on. */
  private ready(session: ExecutorSession, fresh: boolean): void {
    const { projectId } = session.principal;
    let set = this.readyByProject.get(projectId);
    if (!set) {
      this.readyByProject.set(projectId, (set = new Set()));
      // What was queued while no session of the project was here, this process did not count.
      this.heardForProject.set(projectId, ++this.heard);
    }
    set.add(session);
    const dry = this.dryForProject.get(projectId);
    if (fresh && dry !== undefined && dry >= (this.heardForProject.get(projectId) ?? 0)) {
      this.settled.set(session, dry);
      return;
    }
    void this.claimFor(session);
  }

  /** A session detached or closed: it takes no runs. */
  private gone(session: ExecutorSession): void {
    const set = this.readyByProject.get(session.principal.projectId);
    set?.delete(session);
    if (set?.size === 0) {
      this.readyByProject.delete(session.principal.projectId);
      // A session of the project that is ready later claims as it gets ready: nothing to remember.
      this.heardForProject.delete(session.principal.projectId);
      this.dryForProject.delete(session.principal.projectId);
    }
    this.settled.delete(session);
  }

  /** Projects whose queued runs this process keeps count of: those with a session ready here. */
  get projectsHeard(): number {
    return this.heardForProject.size;
  }

  /** Whether any session of the project is ready here. */
  serves(projectId: string): boolean {
    return this.readyByProject.has(projectId);
  }

  /** A run of the session ended: it claims again only when a queued run may wait for it. */
  private runEnded(session: ExecutorSession): void {
    const settled = this.settled.get(session) ?? -1;
    const heard = Math.max(
      this.heardForProject.get(session.principal.projectId) ?? 0,
      this.heardForSession.get(session) ?? 0,
    );
    if (settled < heard) void this.claim(session);
  }

  /** Runs the session can take now, less the slots reserved for runs being inserted for it. */
  private room(session: ExecutorSession): number {
    return session.freeCapacity - (this.reserved.get(session) ?? 0);
  }

  /**
   * A slot for a run about to be inserted, on `pinned` (the local session it is pinned to) or, when
   * it is pinned to none, on the project's local session with the most room; none while the process
   * drains. A claim in flight for that session is waited for first: it counts the room it saw when
   * it began, so a slot taken meanwhile could overfill the session. Given back with `unreserve` once
   * the run has started or was queued.
   */
  private async reserve(projectId: string, pinned: ExecutorSession | null): Promise<ExecutorSession | undefined> {
    for (;;) {
      const ready = this.readyByProject.get(projectId);
      if (!ready || this.deps.phase.draining) return undefined;
      let best: ExecutorSession | undefined;
      for (const session of pinned ? [pinned] : ready) {
        if (ready.has(session) && this.room(session) > 0 && (!best || this.room(session) > this.room(best)))
          best = session;
      }
      if (!best) return undefined;
      const claim = this.claiming.get(best);
      if (!claim) {
        this.reserved.set(best, (this.reserved.get(best) ?? 0) + 1);
        return best;
      }
      await claim.done;
    }
  }

  private unreserve(session: ExecutorSession): void {
    const left = (this.reserved.get(session) ?? 1) - 1;
    if (left > 0) this.reserved.set(session, left);
    else this.reserved.delete(session);
  }

  // ---- claims ------------------------------------------------------------------------------------

  /**
   * A run may wait for this session (the session is ready, a run was queued for it here or by
   * another process, the reconcile found one): claims queued runs for it until it is full or nothing
   * waits, one claim at a time per session. Resolves true when the queue ran dry (so other sessions
   * need not ask).
   */
  claimFor(session: ExecutorSession): Promise<boolean> {
    this.heardForSession.set(session, ++this.heard);
    return this.claim(session);
  }

  private claim(session: ExecutorSession): Promise<boolean> {
    const running = this.claiming.get(session);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state: ClaimState = { again: false, done: Promise.resolve(false) };
    this.claiming.set(session, state);
    state.done = this.claimWhileAsked(session, state);
    return state.done;
  }

  /** Claims until the session is full or the queue is dry; again when asked to meanwhile. */
  private async claimWhileAsked(session: ExecutorSession, state: ClaimState): Promise<boolean> {
    let drained = false;
    try {
      do {
        state.again = false;
        drained = (await this.claimUntilFull(session)) ?? drained;
      } while (state.again && !this.deps.phase.draining);
    } catch (err) {
      this.deps.log.error('dispatch failed', { sessionId: session.id, err });
    } finally {
      this.claiming.delete(session);
    }
    return drained;
  }

  /** Claims while the session has room: true when the queue ran dry, false when it filled, undefined when it had no room. */
  private async claimUntilFull(session: ExecutorSession): Promise<boolean | undefined> {
    let drained: boolean | undefined;
    while (!this.deps.phase.draining && this.room(session) > 0) {
      const wanted = this.room(session);
      const heard = this.heard;
      const claimed = await this.claimBatch(session, wanted);
      for (const run of claimed) await this.start(run, session);
      drained = claimed.length < wanted;
      if (drained) {
        if (!session.closed) this.settled.set(session, heard);
        this.dryAt(session.principal.projectId, heard);
        break;
      }
    }
    return drained;
  }

  /** A claim of the project found its queue dry at `heard` (kept while a session of it is ready here). */
  private dryAt(projectId: string, heard: number): void {
    if (this.readyByProject.has(projectId) && heard > (this.dryForProject.get(projectId) ?? -1))
      this.dryForProject.set(projectId, heard);
  }

  /**
   * One claim for the session, in one statement with those of the project's other sessions asked
   * meanwhile (claim-batches.ts); published on `otp:run.claim`.
   */
  private async claimBatch(session: ExecutorSession, wanted: number): Promise<ClaimedRun[]> {
    const began = performance.now();
    const claimed = await this.batches.ask(session.principal.projectId, session.id, wanted);
    if (runClaim.hasSubscribers) {
      const message: RunClaimMessage = {
        sessionId: session.id,
        wanted,
        claimed: claimed.length,
        ms: performance.now() - began,
      };
      runClaim.publish(message);
    }
    return claimed;
  }

  /** A run for any session of the project: offered to the local sessions with room, the most room first. */
  private wakeProject(projectId: string): Promise<void> {
    // No session of the project here (every process hears every project's dispatch notices).
    if (!this.readyByProject.has(projectId)) return Promise.resolve();
    this.heardForProject.set(projectId, ++this.heard);
    const running = this.projectWakes.get(projectId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { again: false, done: Promise.resolve() };
    this.projectWakes.set(projectId, state);
    state.done = this.offer(projectId, state);
    return state.done;
  }

  private async offer(projectId: string, state: { again: boolean }): Promise<void> {
    try {
      do {
        state.again = false;
        const sessions = [...(this.readyByProject.get(projectId) ?? [])]
          .filter((s) => this.room(s) > 0)
          .sort((a, b) => this.room(b) - this.room(a));
        // All at once: their claims share one statement, which gives the first the runs it has room
        // for, then the next, and so on while runs wait.
        if (!this.deps.phase.draining) await Promise.all(sessions.map((session) => this.claim(session)));
      } while (state.again && !this.deps.phase.draining);
    } finally {
      this.projectWakes.delete(projectId);
    }
  }
}
