// How one process stops (SIGTERM, SIGINT): it drains, hands its executors over to the other
// processes when there are any, and ends what is left as `error`. docs/protocol.md, "Draining".

import { CloseCode } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { RunDriver } from './run-driver.js';
import type { ExecutorSession } from './session.js';

// After the resume window, what a driver still needs to write its verdict.
const FINISH_WAIT_MS = 5_000;

export interface ShutdownHost {
  sessions: ReadonlyMap<string, ExecutorSession>;
  runs: ReadonlyMap<string, RunDriver>;
  config: Config;
  log: Logger;
  /** How many other service processes are alive to take sessions over. */
  livePeers?: () => Promise<number>;
}

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class Shutdown {
  /** No run is claimed any more (from the first signal on); /readyz reports not ready. */
  draining = false;
  /** Past the drain: a new socket is closed at once (1001). */
  stopping = false;
  private hurried = false;
  /** Other processes alive when the drain ended: sessions can be taken over only when there are some. */
  private peers = 0;
  private drained?: Promise<void>;
  private wake: () => void = () => {};

  constructor(private readonly host: ShutdownHost) {}

  /** Resolves after `ms`, when every driver is done, or on hurry(). */
  private until(drivers: RunDriver[], ms: number): Promise<unknown> {
    if (this.hurried || !drivers.length) return Promise.resolve();
    const hurried = new Promise<void>((resolve) => (this.wake = resolve));
    return Promise.race([Promise.allSettled(drivers.map((d) => d.done)), timer(ms), hurried]);
  }

  /**
   * First half: no run is claimed any more; runs in flight may finish within `drainMs`. Then, when
   * another process is alive to take them over, every session is closed with 4503 (reconnect and
   * resume elsewhere) and waits detached, its runs paused, to be taken over there.
   */
  drain(): Promise<void> {
    return (this.drained ??= this.drainOnce());
  }

  private async drainOnce(): Promise<void> {
    this.draining = true;
    const { runs, sessions, config, log } = this.host;
    if (runs.size) log.info('draining: runs in flight may finish', { runs: runs.size, drainMs: config.drainMs });
    await this.until([...runs.values()], config.drainMs);
    const peers = !this.hurried && config.otp.resumeWindowMs > 0 ? await this.livePeers() : 0;
    this.peers = peers;
    if (!peers) return;
    for (const session of [...sessions.values()]) session.handOff();
    log.info('draining: executors told to resume their sessions elsewhere', { runs: runs.size, peers });
  }

  /**
   * Second half: waits (at most the resume window) for the sessions told to reconnect elsewhere to be
   * taken over (or to end with their window); the runs still here then end as `error`, and every
   * socket closes with 1001.
   */
  async finish(): Promise<void> {
    await this.drain();
    this.stopping = true;
    const { runs, sessions, config } = this.host;
    // Without another process nobody can take a session over: this one no longer listens.
    const handingOff = () => this.peers > 0 && [...sessions.values()].some((s) => s.detached && !s.closed);
    const deadline = Date.now() + config.otp.resumeWindowMs + FINISH_WAIT_MS;
    while (handingOff() && !this.hurried && Date.now() < deadline) {
      const hurried = new Promise<void>((resolve) => (this.wake = resolve));
      const changed = new Promise<void>((resolve) => (this.sessionGone = resolve));
      await Promise.race([changed, hurried, timer(deadline - Date.now())]);
    }
    const drivers = [...runs.values()];
    for (const driver of drivers) driver.executorLost('service shutting down');
    await Promise.race([Promise.allSettled(drivers.map((d) => d.done)), timer(FINISH_WAIT_MS)]);
    for (const session of sessions.values()) session.close(CloseCode.goingAway, 'service shutting down');
  }

  /** A session closed or was handed over (the engine tells): finish() looks again. */
  sessionGone: () => void = () => {};

  hurry(): void {
    this.hurried = true;
    this.wake();
  }

  private async livePeers(): Promise<number> {
    try {
      return (await this.host.livePeers?.()) ?? 0;
    } catch (err) {
      this.host.log.error('could not count the other service processes', { err });
      return 0;
    }
  }
}
