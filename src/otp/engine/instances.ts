// Each service process heart-beats in PostgreSQL. When one stops heart-beating, any other process
// closes its sessions and finishes its runs as `error`, keeping every step that was already reported.
import os from 'node:os';
import type { Logger } from '../../log.js';
import type { InstanceStore } from '../store/instance-store.js';

export class InstanceRegistry {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly instances: InstanceStore,
    private readonly log: Logger,
    readonly id: string,
    /** paused: true while no peer can be judged silent (the database is, or was just, unavailable). */
    private readonly options: { heartbeatMs: number; timeoutMs: number; paused?: () => boolean },
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
    if (this.options.paused?.()) return;
    const dead = await this.instances.silentPeers(this.id, this.options.timeoutMs);
    for (const instanceId of dead) await this.finishInstance(instanceId, 'service process stopped responding');
  }

  /** Closes what a process held: used for dead peers and, on shutdown, for this process itself. */
  async finishInstance(instanceId: string, reason: string): Promise<void> {
    const finished = await this.instances.release(instanceId, reason);
    if (finished.runs || finished.sessions) {
      this.log.info('finished the work of a stopped process', { instanceId, ...finished });
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.finishInstance(this.id, 'service shut down');
  }
}
