// What the console watches of this process's runs and sessions: every transition of a run it drives
// (listeners, for the live pages), a run's machine trace (from memory while driven here, else as last
// written), a session's liveness (only its holder knows the last pong), a run's verdict awaited, and
// the periodic trace flush.
import type { Logger } from '../../log.js';
import { errors } from '../../errors.js';
import type { RunStore } from '../store/run-store.js';
import type { RunTrace, RunTraceStore } from '../store/run-trace.js';
import type { RunView, RunViews } from '../store/run-views.js';
import { isFinalRunStatus } from '../../../machines/types.js';
import type { RunDriver } from './run-driver.js';
import type { ExecutorSession } from './session.js';
import { TraceFlusher } from './trace-flusher.js';

export interface RunWatchDeps {
  runs: ReadonlyMap<string, RunDriver>;
  sessions: ReadonlyMap<string, ExecutorSession>;
  store: RunStore;
  views: RunViews;
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

  /**
   * Waits up to `ms` for a run's verdict: on its driver when this process holds it, otherwise by
   * reading its status (another process may hold it, or it waits queued). Answers the run either way.
   */
  async awaitVerdict(projectId: string, runId: string, ms: number): Promise<RunView> {
    const { store } = this.deps;
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      const driver = this.deps.runs.get(runId);
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
  }
}
