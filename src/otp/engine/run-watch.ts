// What the console watches of this process's runs and sessions: every transition of a run it drives
// (listeners, for the live pages), a run's machine trace (from memory while driven here, else as last
// written), a session's liveness and machine (only its holder knows them: session-trace.ts; those of
// the last CLOSED_KEPT sessions closed here are kept), a run's verdict awaited, and the periodic
// trace flush.

import { isFinalRunStatus } from '../../../machines/types.js';
import { errors } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { RunStore } from '../store/run-store.js';
import type { RunTrace, RunTraceStore } from '../store/run-trace.js';
import type { RunView, RunViews } from '../store/run-views.js';
import type { RunDrivers } from './drivers.js';
import { type SessionChange, type SessionTrace, type SessionTransition, sessionChanges } from './session-trace.js';
import type { SessionRegistry } from './sessions.js';
import { TraceFlusher } from './trace-flusher.js';

export interface RunWatchDeps {
  drivers: RunDrivers;
  sessions: SessionRegistry;
  store: RunStore;
  views: RunViews;
  /** Where traces are kept; none: memory only. */
  traces?: RunTraceStore;
  log: Logger;
  /** How often the traces of running runs are written; 0: only with the verdict. */
  traceFlushMs: number;
}

export type RunListener = (runId: string, projectId: string) => void;
export type SessionListener = (sessionId: string, projectId: string, kind: SessionChange['kind']) => void;

/** What only the process holding a session knows of it. */
export interface SessionLiveness {
  lastPongAt: Date | null;
  runsInFlight: number;
  /** Its machine: the state entered last, the transitions kept (keepalive round trips only counted). */
  state: string;
  transitions: SessionTransition[];
  dropped: number;
  pings: number;
  pongs: number;
  lastPingAt: Date | null;
}

// Sessions closed here whose machine a page may still show (a few KiB each).
const CLOSED_KEPT = 100;

export class RunWatch {
  private readonly listeners = new Set<RunListener>();
  private readonly sessionListeners = new Set<SessionListener>();
  private readonly closedSessions = new Map<string, { projectId: string; trace: SessionTrace }>();
  private readonly flusher?: TraceFlusher;
  private readonly onSessionChange = (message: unknown) => this.sessionChanged(message as SessionChange);

  constructor(private readonly deps: RunWatchDeps) {
    if (deps.traces && deps.traceFlushMs > 0) {
      this.flusher = new TraceFlusher(deps.traces, () => traces(deps.drivers), deps.log, deps.traceFlushMs);
    }
    sessionChanges.subscribe(this.onSessionChange);
    deps.drivers.on('transition', (runId, projectId) => this.changed(runId, projectId));
  }

  /** Called after every change of a session's machine held by this process; answers the unsubscribe. */
  onSessionChanged(listener: SessionListener): () => void {
    this.sessionListeners.add(listener);
    return () => this.sessionListeners.delete(listener);
  }

  // The channel is the process's: only this engine's sessions are this watch's.
  private sessionChanged({ session, trace, kind }: SessionChange): void {
    if (this.deps.sessions.get(session.id) !== session) return;
    const { projectId } = session.principal;
    if (trace.closed) {
      this.closedSessions.set(session.id, { projectId, trace });
      if (this.closedSessions.size > CLOSED_KEPT) this.closedSessions.delete(this.closedSessions.keys().next().value!);
    }
    for (const listener of this.sessionListeners) {
      try {
        listener(session.id, projectId, kind);
      } catch (err) {
        this.deps.log.error('session listener failed', { sessionId: session.id, err });
      }
    }
  }

  /** Called after every transition of a run this process drives; answers the unsubscribe. */
  onRunChange(listener: RunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A run driven here moved (a transition of its machine). */
  private changed(runId: string, projectId: string): void {
    for (const listener of this.listeners) {
      try {
        listener(runId, projectId);
      } catch (err) {
        this.deps.log.error('run listener failed', { runId, err });
      }
    }
  }

  /** What only this process knows of one of its sessions (or of one it closed lately). */
  sessionLiveness(projectId: string, sessionId: string): SessionLiveness | undefined {
    const session = this.deps.sessions.get(sessionId);
    const closed = this.closedSessions.get(sessionId);
    const trace =
      session?.principal.projectId === projectId
        ? session.trace
        : closed?.projectId === projectId
          ? closed.trace
          : undefined;
    if (!trace) return undefined;
    const { state, dropped, pings, pongs, lastPingAt } = trace;
    return {
      lastPongAt: session?.lastPongAt ?? trace.lastPongAt,
      runsInFlight: session?.runs?.size ?? 0,
      state,
      transitions: [...trace.transitions],
      dropped,
      pings,
      pongs,
      lastPingAt,
    };
  }

  /** The run machine's transitions: from memory when this process drives the run, else as last written. */
  async runTrace(projectId: string, runId: string): Promise<RunTrace> {
    const driver = this.deps.drivers.get(runId);
    if (driver && driver.projectId === projectId) {
      const { transitions, dropped } = driver.trace.snapshot();
      const status = await this.deps.store.runStatus(projectId, runId);
      return { runId, status: status ?? 'running', transitions, dropped, live: true };
    }
    if (!this.deps.traces) throw errors.notFound('Run', runId);
    return this.deps.traces.read(projectId, runId);
  }

  /**
   * Waits up to `ms` for a run's verdict: on its driver when this process holds it, otherwise by
   * reading its status (another process may hold it, or it waits queued). Answers the run either way.
   */
  async awaitVerdict(projectId: string, runId: string, ms: number): Promise<RunView> {
    const { store } = this.deps;
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      const driver = this.deps.drivers.get(runId);
      if (driver && left > 0) {
        await Promise.race([driver.done.catch(() => {}), new Promise((r) => setTimeout(r, left).unref())]);
        break;
      }
      const status = await store.runStatus(projectId, runId);
      if (!status) throw errors.notFound('Run', runId);
      if (isFinalRunStatus(status) || left <= 0) break;
      await new Promise((r) => setTimeout(r, Math.min(50, left)).unref());
    }
    return this.deps.views.run(projectId, runId);
  }

  stop(): void {
    this.flusher?.stop();
    sessionChanges.unsubscribe(this.onSessionChange);
  }
}

function* traces(drivers: RunDrivers) {
  for (const driver of drivers.all.values()) yield driver.trace;
}
