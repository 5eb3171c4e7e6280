// Each service process heart-beats in PostgreSQL. When one stops heart-beating, any other process
// closes its sessions and finishes its runs as `error`, keeping every step that was already reported.
import os from 'node:os';
import type { InstanceStore } from '../store/instance-store.js';
import type { RunStore } from '../store/run-store.js';
import type { Logger } from '../../log.js';

export class InstanceRegistry {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly instances: InstanceStore,
    private readonly runs: RunStore,
    private readonly log: Logger,
    readonly id: string,
    private readonly options: { heartbeatMs: number; timeoutMs: number },
  ) {}

  async start(): Promise<void> {
    await this.instances.register({ id: this.id, hostname: os.hostname(), pid: process.pid });
    await this.sweep();
    this.timer = setInterval(() => {
      this.beat().catch((err) => this.log.error('heartbeat failed', { err }));
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    await this.instances.heartbeat(this.id);
    await this.sweep();
  }

  /** Finishes the work of processes whose heartbeat is older than the time-out. */
  async sweep(): Promise<void> {
    const dead = await this.instances.silentPeers(this.id, this.options.timeoutMs);
    for (const instanceId of dead) await this.finishInstance(instanceId, 'service process stopped responding');
  }

  /**
   * Closes what a process held: used for dead peers and, on shutdown, for this process itself. The
   * row goes last, so a sweep cut short (this process dying too) is taken up by the next one.
   */
  async finishInstance(instanceId: string, reason: string): Promise<void> {
    const runIds = await this.runs.runningRunIds(instanceId);
    await this.runs.finishOrphanedRuns(runIds, { status: 'error', code: 'E_INTERNAL', reason });
    const sessionIds = await this.runs.openSessionIds(instanceId);
    for (const id of sessionIds) await this.runs.closeSession(id, 1001, reason);
    await this.instances.remove(instanceId);
    if (runIds.length || sessionIds.length) {
      this.log.info('finished the work of a stopped process', { instanceId, runs: runIds.length, sessions: sessionIds.length });
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.finishInstance(this.id, 'service shut down');
  }
}
