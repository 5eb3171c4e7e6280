// What the console watches of this process's runs and sessions: every transition of a run it drives
// (listeners, for the live pages), a run's machine trace (from memory while driven here, else as last
// written), a session's liveness (only its holder knows the last pong), and the periodic trace flush.
import type { Logger } from '../../log.js';
import { errors } from '../../errors.js';
import type { RunStore } from '../store/run-store.js';
import type { RunTrace, RunTraceStore } from '../store/run-trace.js';
import type { RunDriver } from './run-driver.js';
import type { ExecutorSession } from './session.js';
import { TraceFlusher } from './trace-flusher.js';

export interface RunWatchDeps {
  runs: ReadonlyMap<string, RunDriver>;
  sessions: ReadonlyMap<string, ExecutorSession>;
  store: RunStore;
  /** Where traces are kept; none: memory only. */
  traces?: RunTraceStore;
  log: Logger;
  /** How often the traces of running runs are written; 0: only with the verdict. */
  traceFlushMs: number;
}

export type RunListener = (runId: string, projectId: string) => void;

export class RunWatch {
  private readonly listeners = new Set<RunListener>();
  private readonly flusher?: TraceFlusher;

  constructor(private readonly deps: RunWatchDeps) {
    if (deps.traces && deps.traceFlushMs > 0) {
      this.flusher = new TraceFlusher(deps.traces, () => deps.runs.values(), deps.log, deps.traceFlushMs);
    }
  }

  /** Called after every transition of a run this process drives; answers the unsubscribe. */
  onRunChange(listener: RunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A run driven here moved (the run driver's `changed` hook). */
  changed(runId: string, projectId: string): void {
    for (const listener of this.listeners) {
      try {
        listener(runId, projectId);
      } catch (err) {
        this.deps.log.error('run listener failed', { runId, err });
      }
    }
  }

  /** What only this process knows of one of its sessions: the last pong and the runs in flight. */
  sessionLiveness(projectId: string, sessionId: string): { lastPongAt: Date | null; runsInFlight: number } | undefined {
    const session = this.deps.sessions.get(sessionId);
    if (!session || session.principal.projectId !== projectId) return undefined;
    return { lastPongAt: session.lastPongAt, runsInFlight: session.runs.size };
  }

  /** The run machine's transitions: from memory when this process drives the run, else as last written. */
  async runTrace(projectId: string, runId: string): Promise<RunTrace> {
    const driver = this.deps.runs.get(runId);
    if (driver && driver.projectId === projectId) {
      const { transitions, dropped } = driver.traceSnapshot();
      const status = await this.deps.store.runStatus(projectId, runId);
      return { runId, status: status ?? 'running', transitions, dropped, live: true };
    }
    if (!this.deps.traces) throw errors.notFound('Run', runId);
    return this.deps.traces.read(projectId, runId);
  }

  stop(): void {
    this.flusher?.stop();
  }
}
