// Writes the run machine's traces of every run this process drives, the transitions added since the
// last flush, in one statement per interval: the console's view of a run driven elsewhere, at no
// database cost per step. The verdict's write carries the final trace (run-driver.ts).
import type { Logger } from '../../log.js';
import type { RunTraceStore } from '../store/run-trace.js';
import type { RunDriver } from './run-driver.js';

export class TraceFlusher {
  private readonly timer: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly store: RunTraceStore,
    private readonly drivers: () => Iterable<RunDriver>,
    private readonly log: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    const changed = [...this.drivers()].filter((d) => d.traceVersion !== d.flushedVersion);
    if (!changed.length) return Promise.resolve();
    const versions = changed.map((d) => d.traceVersion);
    this.flushing = this.store
      .flush(changed.map((d) => d.traceSince(d.flushedVersion)))
      .then(() => {
        for (const [i, d] of changed.entries()) d.flushedVersion = versions[i]!;
      })
      .catch((err) => this.log.error('trace flush failed', { err }))
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
