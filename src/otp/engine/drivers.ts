// The runs this process drives: a RunDriver for each run a session of this process took (`drive`),
// found by id, cancelled here or, by notice, on the process that drives it. What happens to them is
// published (`transition`: every transition of a run's machine; `ended`: a driver is done, its
// session has room again) for the parts that care, which subscribe where the engine builds them.
import { EventEmitter } from 'node:events';
import type { StepOutcome } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { Notices } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import type { ClaimedRun, RunStore } from '../store/run-store.js';
import type { EngineEvents } from './diagnostics.js';
import { RunDriver, type RunDriverDeps } from './run-driver.js';
import type { ExecutorSession } from './session.js';
import type { SessionRegistry } from './sessions.js';
import { TimerWheel } from './timer-wheel.js';

export interface RunDriversDeps {
  store: RunStore;
  config: Config;
  log: Logger;
  sessions: SessionRegistry;
  notices?: Notices;
  /** Hooks other parts of the service give the run driver (evidence checks, test results). */
  runHooks?: Pick<RunDriverDeps, 'verifyEvidence' | 'onFinished'>;
  /** Metrics of this process. */
  events?: EngineEvents;
  health?: DatabaseHealth;
}

export interface DriverEvents {
  /** A run driven here moved: a transition of its machine. */
  transition: [runId: string, projectId: string];
  /** A run's driver is done (its verdict is written, or it was released to another process). */
  ended: [driver: RunDriver, session: ExecutorSession];
}

/** A run a session takes: claimed, or transferred from another process with what was recorded of it. */
export type DrivenRun = ClaimedRun & { recorded?: StepOutcome[]; attempts?: number[] };

export class RunDrivers {
  private readonly drivers = new Map<string, RunDriver>();
  private readonly events = new EventEmitter<DriverEvents>();
  // Every run's step time-outs, on one wheel (timer-wheel.ts).
  private readonly clock: TimerWheel;
  private readonly changed = (runId: string, projectId: string) => this.events.emit('transition', runId, projectId);

  constructor(private readonly deps: RunDriversDeps) {
    this.clock = new TimerWheel(10, (err) => deps.log.error('step time-out failed', { err }));
    // A session gone for good takes its runs with it; a transferred one handed them to another process.
    deps.sessions.on('closed', (session, { reason, transferred }) => {
      if (transferred) return;
      for (const driver of session.runs?.values() ?? []) driver.executorLost(`executor connection lost (${reason})`);
    });
    deps.notices?.on('cancel', (notice) => this.drivers.get(notice.runId)?.cancel());
  }

  /** Subscribes to what happens to the runs driven here; answers the unsubscribe. */
  on<K extends keyof DriverEvents>(event: K, listener: (...args: DriverEvents[K]) => void): () => void {
    const heard = listener as Parameters<typeof this.events.on>[1];
    this.events.on(event, heard);
    return () => this.events.off(event, heard);
  }

  get size(): number {
    return this.drivers.size;
  }

  /** Every run driven here, by id. */
  get all(): ReadonlyMap<string, RunDriver> {
    return this.drivers;
  }

  get(runId: string): RunDriver | undefined {
    return this.drivers.get(runId);
  }

  /** The run's driver is told to cancel: here, or (by notice) on the process that drives it. */
  async cancel(runId: string): Promise<void> {
    const driver = this.drivers.get(runId);
    if (driver) return driver.cancel();
    await this.deps.notices
      ?.notify({ kind: 'cancel', runId })
      .catch((err) => this.deps.log.error('notify failed', { err }));
  }

  /** Stops driving a run without deciding anything: another process drives it from now on. */
  release(driver: RunDriver, session: ExecutorSession): void {
    driver.release();
    forgetRun(session, driver.id);
    if (this.drivers.get(driver.id) === driver) this.drivers.delete(driver.id);
  }

  /** The driver of a run on a session, registered; the caller starts it. */
  drive(run: DrivenRun, session: ExecutorSession): RunDriver {
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
        changed: this.changed,
        health: this.deps.health,
        outageWindowMs: otp.outageWindowMs,
        ...this.deps.runHooks,
      },
      session.capabilities as Record<string, unknown>,
    );
    (session.runs ??= new Map()).set(run.id, driver);
    this.drivers.set(run.id, driver);
    const { log, events } = this.deps;
    log.info('run claimed', {
      runId: run.id,
      sessionId: session.id,
      projectId: run.projectId,
      steps: run.steps.length,
    });
    events?.runClaimed();
    driver.done
      .then((output) => {
        if (driver.released) return;
        const { status, counts, reason } = output;
        const durationMs = driver.durationMs;
        log.info('run finished', {
          runId: run.id,
          sessionId: session.id,
          status,
          ...counts,
          durationMs,
          ...(reason ? { reason } : {}),
        });
        events?.runFinished(status, durationMs);
      })
      .catch(() => {})
      .finally(() => {
        forgetRun(session, run.id);
        if (this.drivers.get(run.id) === driver) this.drivers.delete(run.id);
        this.events.emit('ended', driver, session);
      });
    return driver;
  }
}

/** A session's last run gone, its Map goes too: an idle session holds none (about 200 bytes each). */
function forgetRun(session: ExecutorSession, runId: string): void {
  if (session.runs?.delete(runId) && !session.runs.size) session.runs = undefined;
}
