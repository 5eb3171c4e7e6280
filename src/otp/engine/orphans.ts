// The safety net for runs nobody drives: whatever the cause (a process gone without its sweep, a
// verdict that could not be written, a driver that died), a run left `running` with no live actor
// behind it is finished `error` with the reason, its recorded steps kept. Checked every
// `intervalMs`; a run must have been running that long before it is judged, so a claim whose driver
// is being created is never taken for an orphan.
import { OtpErrorCode } from '../../../machines/types.js';
import type { Logger } from '../../log.js';
import type { InstanceStore } from '../store/instance-store.js';
import type { RunStore } from '../store/run-store.js';

export interface OrphanCheckDeps {
  instances: InstanceStore;
  runs: RunStore;
  instanceId: string;
  /** True while this process has a live driver for the run. */
  drives(runId: string): boolean;
  log: Logger;
  intervalMs: number;
  /** True while no run can be judged (the database is, or was just, unavailable: drivers hold, peers have not heart-beaten). */
  paused?: () => boolean;
}

export class OrphanCheck {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(private readonly deps: OrphanCheckDeps) {}

  start(): void {
    if (this.deps.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.check(), this.deps.intervalMs);
    this.timer.unref();
  }

  /** One check (one at a time); answers how many runs it finished. */
  check(): Promise<number> {
    this.running ??= this.finishOrphans()
      .catch((err) => {
        this.deps.log.error('orphan check failed', { err });
        return 0;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async finishOrphans(): Promise<number> {
    const { deps } = this;
    if (deps.paused?.()) return 0;
    const candidates = await deps.instances.undrivenRuns(deps.instanceId, deps.intervalMs);
    // This process's own runs are orphans only when it has no driver for them.
    const orphans = candidates.filter((run) => run.instanceId !== deps.instanceId || !deps.drives(run.id));
    if (!orphans.length) return 0;
    const gone = orphans.filter((run) => run.instanceId !== deps.instanceId).map((run) => run.id);
    const dropped = orphans.filter((run) => run.instanceId === deps.instanceId).map((run) => run.id);
    if (gone.length) {
      await deps.runs.finishUndriven(gone, {
        status: 'error',
        code: OtpErrorCode.internal,
        reason: 'the service process that drove this run is gone',
      });
    }
    if (dropped.length) {
      await deps.runs.finishUndriven(dropped, {
        status: 'error',
        code: OtpErrorCode.internal,
        reason: 'no executor session drives this run any more',
      });
    }
    deps.log.info('finished orphaned runs', { runIds: orphans.map((run) => run.id) });
    return orphans.length;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
