// How one process stops (SIGTERM, SIGINT): it drains, tells its executors to reconnect to the other
// processes when there are any (their sessions are then transferred there), and ends what is left as
// `error`. docs/protocol.md, "Draining".

import { CloseCode } from '../../../machines/types.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';
import type { RunDrivers } from './drivers.js';
import type { Phase } from './phase.js';
import type { RunDriver } from './run-driver.js';
import type { SessionRegistry } from './sessions.js';

// After the resume window, what a driver still needs to write its verdict.
const FINISH_WAIT_MS = 5_000;
// A drain tells each executor when to come back (the `reconnect` frame): the fleet spread over
// RESUME_PACE_MS per session (a thousand resumes a second, about what one process welcomes), at
// most a third of the resume window, so that every session is back well inside it.
export const RESUME_PACE_MS = 1;
const TELL_SLICE = 500;

/** The delay told to the `index`th of `count` sessions: evenly spread over the fleet's share of the window. */
export function reconnectDelay(index: number, count: number, resumeWindowMs: number): number {
  const spreadMs = Math.min(count * RESUME_PACE_MS, resumeWindowMs / 3);
  return count > 1 ? Math.round((index * spreadMs) / count) : 0;
}

export interface ShutdownDeps {
  phase: Phase;
  sessions: SessionRegistry;
  drivers: RunDrivers;
  config: Config;
  log: Logger;
  /** How many other service processes are alive to take sessions over. */
  livePeers?: () => Promise<number>;
}

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class Shutdown {
  private hurried = false;
  /** Other processes alive when the drain ended: sessions can be taken over only when there are some. */
  private peers = 0;
  private drained?: Promise<void>;
  private finished?: Promise<void>;
  private wake: () => void = () => {};
  // Set while finish() waits for the sessions told to reconnect elsewhere: one of them closed.
  private sessionGone: () => void = () => {};

  constructor(private readonly deps: ShutdownDeps) {
    deps.sessions.on('closed', () => this.sessionGone());
  }

  /** Resolves after `ms`, when every driver is done, or on hurry(). */
  private until(drivers: RunDriver[], ms: number): Promise<unknown> {
    if (this.hurried || !drivers.length) return Promise.resolve();
    const hurried = new Promise<void>((resolve) => (this.wake = resolve));
    return Promise.race([Promise.allSettled(drivers.map((d) => d.done)), timer(ms), hurried]);
  }

  /**
   * First half: no run is claimed any more; runs in flight may finish within `drainMs`. Then, when
   * another process is alive to take them over, every session is closed with 4503 (reconnect and
   * resume elsewhere) and waits detached, its runs paused, to be transferred there.
   */
  drain(): Promise<void> {
    return (this.drained ??= this.drainOnce());
  }

  private async drainOnce(): Promise<void> {
    this.deps.phase.draining = true;
    const { drivers, sessions, config, log } = this.deps;
    if (drivers.size) log.info('draining: runs in flight may finish', { runs: drivers.size, drainMs: config.drainMs });
    await this.until([...drivers.all.values()], config.drainMs);
    const peers = !this.hurried && config.otp.resumeWindowMs > 0 ? await this.livePeers() : 0;
    this.peers = peers;
    if (!peers) return;
    const told = [...sessions.all.values()];
    const windowMs = config.otp.resumeWindowMs;
    for (const [i, session] of told.entries()) {
      session.askToReconnectElsewhere(reconnectDelay(i, told.length, windowMs));
      // Thousands told in one go would keep the event loop from the first ones' transfers: slices.
      if (i % TELL_SLICE === TELL_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    log.info('draining: executors told to resume their sessions elsewhere', { runs: drivers.size, peers });
  }

  /**
   * Second half: waits (at most the resume window) for the sessions told to reconnect elsewhere to be
   * transferred (or to end with their window); the runs still here then end as `error`, and every
   * socket closes with 1001. Called again, it answers the first call's end.
   */
  finish(): Promise<void> {
    return (this.finished ??= this.finishOnce());
  }

  private async finishOnce(): Promise<void> {
    await this.drain();
    this.deps.phase.stopping = true;
    const { drivers, sessions, config } = this.deps;
    // Without another process nobody can take a session over: this one no longer listens.
    const awaitingTransfer = () => this.peers > 0 && someAwaitingTransfer(sessions);
    const deadline = Date.now() + config.otp.resumeWindowMs + FINISH_WAIT_MS;
    while (awaitingTransfer() && !this.hurried && Date.now() < deadline) {
      const hurried = new Promise<void>((resolve) => (this.wake = resolve));
      const changed = new Promise<void>((resolve) => (this.sessionGone = resolve));
      await Promise.race([changed, hurried, timer(deadline - Date.now())]);
    }
    const left = [...drivers.all.values()];
    for (const driver of left) driver.executorLost('service shutting down');
    await Promise.race([Promise.allSettled(left.map((d) => d.done)), timer(FINISH_WAIT_MS)]);
    for (const session of sessions.all.values()) session.close(CloseCode.goingAway, 'service shutting down');
  }

  hurry(): void {
    this.hurried = true;
    this.wake();
  }

  private async livePeers(): Promise<number> {
    try {
      return (await this.deps.livePeers?.()) ?? 0;
    } catch (err) {
      this.deps.log.error('could not count the other service processes', { err });
      return 0;
    }
  }
}

/** A session still waiting to be taken over: a loop that stops at the first (transferred ones leave the registry). */
function someAwaitingTransfer(sessions: SessionRegistry): boolean {
  for (const s of sessions.all.values()) if (s.detached && !s.closed) return true;
  return false;
}
