// Group commit: while one statement is in flight, the items that arrive meanwhile wait and go
// together in the next one. Each caller's promise settles with its own item's answer once the
// statement is durable, or fails with the reason its own item could not be written, never another's:
// a statement that fails whole is tried again item by item, so only the items that fail learn of it.
// An outage of the database is no item's fault: every item of the batch fails with it at once (the
// callers wait for the database and submit again).
// Used for the step results of every run (RunStore.writeSteps), for new runs (RunStore.insertRun), for
// their verdicts (RunStore.finishRun) and for new sessions' rows (RunStore.insertSession).

import { isDatabaseUnavailable } from './unavailable.js';

interface Waiting<I, R> {
  item: I;
  resolve(answer: R): void;
  reject(err: unknown): void;
}

export class GroupCommit<I, R = void> {
  private queue: Waiting<I, R>[] = [];
  private inFlight = 0;

  constructor(
    /** Writes the items in one statement; answers one result per item, in the items' order (none for void). */
    // biome-ignore lint/suspicious/noConfusingVoidType: a commit of a void GroupCommit answers nothing
    private readonly commit: (items: I[]) => Promise<R[] | void>,
    /** Statements allowed in flight at once. One makes the largest batches. */
    private readonly concurrency = 1,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.inFlight < this.concurrency) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.inFlight++;
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        try {
          const answers = await this.commit(batch.map((w) => w.item));
          for (const [i, w] of batch.entries()) w.resolve(answers?.[i] as R);
        } catch (err) {
          if (batch.length === 1 || isDatabaseUnavailable(err)) for (const w of batch) w.reject(err);
          else
            for (const w of batch)
              await this.commit([w.item]).then((answers) => w.resolve(answers?.[0] as R), w.reject);
        }
      }
    } finally {
      this.inFlight--;
    }
  }
}
