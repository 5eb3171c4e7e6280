// The time a step has left. Every Playwright call of a step gets what remains as its own timeout, so
// a step never outlives its timeoutMs.
export class Deadline {
  readonly at: number;

  constructor(
    ms: number,
    readonly started = Date.now(),
  ) {
    this.at = started + ms;
  }

  /** Milliseconds left, 0 once passed. */
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }

  /** A Playwright `timeout`: at least 1 ms, since Playwright reads 0 as "no time-out". */
  pw(): number {
    return Math.max(1, this.remaining());
  }

  elapsed(): number {
    return Date.now() - this.started;
  }
}
