// Dispatch of queued runs to this process's ready sessions: one claim at a time per session (FOR
// UPDATE SKIP LOCKED in the store), and a project's new run offered to its sessions with the most room.
// A new run may also skip the queue's claim: a slot reserved on a session here before its insert,
// the insert writes it claimed (see OtpEngine.createRun).
import type { Logger } from '../../log.js';
import type { ClaimedRun, RunStore } from '../store/run-store.js';
import { type RunClaimMessage, runClaim } from './diagnostics.js';
import type { ExecutorSession } from './session.js';

export interface DispatchDeps {
  store: RunStore;
  instanceId: string;
  log: Logger;
  /** True once the process drains: nothing more is claimed. */
  draining(): boolean;
  /** Starts a claimed run on the session that claimed it. */
  start(run: ClaimedRun, session: ExecutorSession): Promise<void>;
}

interface ClaimState {
  again: boolean;
  done: Promise<boolean>;
}

export class Dispatch {
  private readonly readyByProject = new Map<string, Set<ExecutorSession>>();
  private readonly claiming = new Map<ExecutorSession, ClaimState>();
  private readonly projectWakes = new Map<string, { again: boolean }>();
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

  constructor(private readonly deps: DispatchDeps) {}

  /** A session got its welcome (or was resumed): it takes runs from now on. */
  ready(session: ExecutorSession): void {
    const set = this.readyByProject.get(session.principal.projectId) ?? new Set();
    set.add(session);
    this.readyByProject.set(session.principal.projectId, set);
    void this.claimFor(session);
  }

  /** A session detached or closed: it takes no runs. */
  gone(session: ExecutorSession): void {
    const set = this.readyByProject.get(session.principal.projectId);
    set?.delete(session);
    if (set?.size === 0) {
      this.readyByProject.delete(session.principal.projectId);
      // A session of the project that is ready later claims as it gets ready: nothing to remember.
      this.heardForProject.delete(session.principal.projectId);
    }
    this.settled.delete(session);
  }

  /** Projects whose queued runs this process keeps count of: those with a session ready here. */
  get projectsHeard(): number {
    return this.heardForProject.size;
  }

  /** A run of the session ended: it claims again only when a queued run may wait for it. */
  runEnded(session: ExecutorSession): void {
    const settled = this.settled.get(session) ?? -1;
    const heard = Math.max(
      this.heardForProject.get(session.principal.projectId) ?? 0,
      this.heardForSession.get(session) ?? 0,
    );
    if (settled < heard) void this.claim(session);
  }

  /** Whether any session of the project is ready here. */
  serves(projectId: string): boolean {
    return this.readyByProject.has(projectId);
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
  async reserve(projectId: string, pinned: ExecutorSession | null): Promise<ExecutorSession | undefined> {
    for (;;) {
      const ready = this.readyByProject.get(projectId);
      if (!ready || this.deps.draining()) return undefined;
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

  unreserve(session: ExecutorSession): void {
    const left = (this.reserved.get(session) ?? 1) - 1;
    if (left > 0) this.reserved.set(session, left);
    else this.reserved.delete(session);
  }

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
    state.done = (async () => {
      let drained = false;
      try {
        do {
          state.again = false;
          while (!this.deps.draining() && this.room(session) > 0) {
            const wanted = this.room(session);
            const heard = this.heard;
            const began = performance.now();
            const claimed = await this.deps.store.claimRuns(
              { id: session.id, projectId: session.principal.projectId },
              this.deps.instanceId,
              wanted,
            );
            if (runClaim.hasSubscribers) {
              const message: RunClaimMessage = {
                sessionId: session.id,
                wanted,
                claimed: claimed.length,
                ms: performance.now() - began,
              };
              runClaim.publish(message);
            }
            for (const run of claimed) await this.deps.start(run, session);
            drained = claimed.length < wanted;
            if (drained) {
              if (!session.closed) this.settled.set(session, heard);
              break;
            }
          }
        } while (state.again && !this.deps.draining());
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
  wakeProject(projectId: string): void {
    // No session of the project here (every process hears every project's dispatch notices).
    if (!this.readyByProject.has(projectId)) return;
    this.heardForProject.set(projectId, ++this.heard);
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
            .filter((s) => this.room(s) > 0)
            .sort((a, b) => this.room(b) - this.room(a));
          for (const session of sessions) {
            if (this.deps.draining() || (await this.claim(session))) break;
          }
        } while (mine.again && !this.deps.draining());
      } finally {
        this.projectWakes.delete(projectId);
      }
    })();
  }
}
