// Writes the run machine's traces of every run this process drives, the transitions added since the
// last flush, in one statement per interval: the console's view of a run driven elsewhere, at no
// database cost per step. The verdict's write carries the final trace (run-driver.ts).
import type { Logger } from '../../log.js';
import type { RunTraceStore } from '../store/run-trace.js';
import type { TraceBuffer } from './trace-buffer.js';

export class TraceFlusher {
  private readonly timer: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly store: RunTraceStore,
    private readonly traces: () => Iterable<TraceBuffer>,
    private readonly log: Logger,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    const changed = [...this.traces()].filter((t) => t.version !== t.flushedVersion);
    if (!changed.length) return Promise.resolve();
    const versions = changed.map((t) => t.version);
    this.flushing = this.store
      .flush(changed.map((t) => t.since(t.flushedVersion)))
      .then(() => {
        for (const [i, t] of changed.entries()) t.flushedVersion = versions[i]!;
      })
      .catch((err) => this.log.error('trace flush failed', { err }))
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
