// Group commit for step results (src/db/group-commit.ts): while one write is in flight, the results
// that arrive meanwhile wait and go together in the next statement. Each caller's promise settles
// when its rows are durable, or fails with the reason its own rows could not be written (never for
// another caller's rows: one run's rows are written all or nothing).
import { GroupCommit } from '../../db/group-commit.js';
import type { RunStore, StepWrite } from '../store/run-store.js';
import { stepWrite, type StepWriteMessage } from './diagnostics.js';

export class StepWriter {
  private readonly commits: GroupCommit<StepWrite[]>;

  constructor(
    private readonly store: RunStore,
    /**
     * Statements allowed in flight at once. One makes the largest batches: on the benchmark machine
     * it gave more steps per second than two, at less CPU per step in both the service and
     * PostgreSQL, with no worse latency (benchmarks/RESULTS.md).
     */
    concurrency = 1,
  ) {
    this.commits = new GroupCommit((callers) => this.send(callers.flat()), concurrency);
  }

  write(writes: StepWrite[]): Promise<void> {
    return this.commits.submit(writes);
  }

  private async send(writes: StepWrite[]): Promise<void> {
    const sentAt = performance.now();
    await this.store.recordSteps(writes);
    if (stepWrite.hasSubscribers) {
      const message: StepWriteMessage = { rows: writes.length, ms: performance.now() - sentAt };
      stepWrite.publish(message);
    }
  }
}
