// Whether PostgreSQL can be reached, as this process last found out, and the one place that speaks of
// an outage. Whoever meets a failure reports it (`report`); an outage (isDatabaseUnavailable) turns
// the health `down`, logs one line, and a probe (`SELECT 1`, backing off up to `maxProbeMs`) runs
// until the database answers; then one line with the outage's length, the runs that waited and the
// writes tried again. Writers that wait for the database (`whenAvailable`) all go on at that moment.
import type { Logger } from '../log.js';
import { isDatabaseUnavailable } from './unavailable.js';

export interface DatabaseHealthOptions {
  /** The first probe's delay after the outage began; each next one waits twice as long, up to maxProbeMs. */
  probeMs?: number;
  maxProbeMs?: number;
}

export interface DatabaseHealthStats {
  available: boolean;
  /** Outages seen since the start. */
  outages: number;
  /** Milliseconds spent unavailable since the start (the current outage included). */
  unavailableMs: number;
  /** Runs whose write waits for the database now. */
  heldRuns: number;
  /** Writes tried again after an outage. */
  retriedWrites: number;
}

/** The short name of an outage's cause: a socket code or SQLSTATE, never a message (it may carry a host or SQL). */
function causeOf(err: unknown): string {
  const seen = new Set<unknown>();
  let current = err as { code?: unknown; cause?: unknown; errors?: unknown } | undefined;
  while (current && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    if (typeof current.code === 'string') return current.code;
    current = (current.cause ?? (Array.isArray(current.errors) ? current.errors[0] : undefined)) as typeof current;
  }
  return 'connection lost';
}

export class DatabaseHealth {
  private down: { since: number; cause: string; maxHeld: number; retried: number } | undefined;
  private waiting: Array<() => void> = [];
  private probeTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private outages = 0;
  private unavailableMs = 0;
  private held = 0;
  private retried = 0;
  /** When the database came back last (Date.now()); 0 before any outage. */
  recoveredAt = 0;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly log: Logger,
    private readonly options: DatabaseHealthOptions = {},
  ) {}

  get available(): boolean {
    return this.down === undefined;
  }

  /**
   * Tells the health of a failure. Answers true when it is an outage: it is counted and the health
   * speaks of it, so the caller logs nothing of its own. False for any other error.
   */
  report(err: unknown): boolean {
    if (!isDatabaseUnavailable(err)) return false;
    if (this.down || this.stopped) return true;
    this.down = { since: Date.now(), cause: causeOf(err), maxHeld: this.held, retried: 0 };
    this.outages++;
    this.log.error('database unavailable', { cause: this.down.cause });
    this.scheduleProbe(this.options.probeMs ?? 250);
    return true;
  }

  /** Resolves once the database answers again (at once when it is not known to be down). */
  whenAvailable(): Promise<void> {
    if (!this.down || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A run's write waits for the database: counted until the returned function is called. */
  hold(): () => void {
    this.held++;
    if (this.down && this.held > this.down.maxHeld) this.down.maxHeld = this.held;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
    };
  }

  /** A write is tried again after an outage. */
  retriedWrite(): void {
    this.retried++;
    if (this.down) this.down.retried++;
  }

  /** True for `ms` after the database came back (peers may not have heart-beaten yet). */
  recentlyRecovered(ms: number): boolean {
    return this.recoveredAt > 0 && Date.now() - this.recoveredAt < ms;
  }

  stats(): DatabaseHealthStats {
    return {
      available: this.available,
      outages: this.outages,
      unavailableMs: this.unavailableMs + (this.down ? Date.now() - this.down.since : 0),
      heldRuns: this.held,
      retriedWrites: this.retried,
    };
  }

  /**
   * A logger that leaves outages to the health: an error line whose `err` is an outage is reported
   * here instead of written (one line per outage, not one per attempt).
   */
  quiet(log: Logger): Logger {
    return {
      info: (msg, fields) => log.info(msg, fields),
      debug: (msg, fields) => log.debug(msg, fields),
      error: (msg, fields) => {
        if (fields && 'err' in fields && this.report(fields.err)) return;
        log.error(msg, fields);
      },
    };
  }

  private scheduleProbe(delayMs: number): void {
    if (this.stopped) return;
    this.probeTimer = setTimeout(() => {
      this.probe().then(
        () => this.recovered(),
        () => this.scheduleProbe(Math.min(delayMs * 2, this.options.maxProbeMs ?? 1_000)),
      );
    }, delayMs);
    this.probeTimer.unref();
  }

  private recovered(): void {
    const down = this.down;
    if (!down) return;
    this.down = undefined;
    const outageMs = Date.now() - down.since;
    this.unavailableMs += outageMs;
    this.recoveredAt = Date.now();
    this.log.info('database available again', {
      cause: down.cause,
      outageMs,
      runsHeld: down.maxHeld,
      retriedWrites: down.retried,
    });
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Stops probing; whoever waits goes on (and meets the error again, or the closed pool). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probeTimer);
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}
