// Signs the failures of finished runs, after their verdicts and off the step path: a run's final
// status (the `run-live` notice every process hears) queues it, a batch is read and written a moment
// later; a periodic backfill walks every finished run in (finished_at, id) order from where it last
// stopped, so runs whose notice was missed, or that finished before this room existed, are signed too.
// Every write is idempotent (FailureStore.record), so two processes scanning one run do no harm.
import type { Logger } from '../log.js';
import type { RunFailureSource } from './facts.js';
import type { FailureStore, NewCluster } from './failure-store.js';

const BATCH = 500;
const FLUSH_DELAY_MS = 250;
/**
 * Runs this recent are left to the notices: a verdict still committing may carry an earlier
 * finished_at than one committed already. At most 5 s, five sweeps' worth when sweeps are more often.
 */
const SETTLE_MAX_MS = 5_000;
/** Recently queued runs, so that the several notices of one verdict cost one scan. */
const REMEMBERED = 2_000;

export interface ScannerOptions {
  /** How often the backfill looks for unsigned runs (0: never by itself). */
  sweepMs: number;
  onNewClusters?: (clusters: NewCluster[]) => void;
}

export class FailureScanner {
  private readonly queued = new Set<string>();
  private readonly seen = new Set<string>();
  private flushing: Promise<void> | undefined;
  private sweeping: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: RunFailureSource,
    private readonly store: FailureStore,
    private readonly log: Logger,
    private readonly options: ScannerOptions,
  ) {}

  start(): void {
    if (this.options.sweepMs <= 0) return;
    this.timer = setInterval(
      () => void this.sweep().catch((err) => this.log.error('failure backfill failed', { err })),
      this.options.sweepMs,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([this.flushing, this.sweeping]);
  }

  /** A run has its verdict: sign its failures shortly (batched with the others finishing now). */
  runFinished(runId: string): void {
    if (this.seen.has(runId)) return;
    this.seen.add(runId);
    if (this.seen.size > REMEMBERED) this.seen.delete(this.seen.values().next().value!);
    this.queued.add(runId);
    // A quarter of a second gathers the runs finishing meanwhile into one read and one write: signing
    // run by run cost a steady fleet measurable time per step (docs/decisions.md, "Figures behind code").
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, FLUSH_DELAY_MS).unref()).then(() =>
      this.flush(),
    );
  }

  /** Waits for the runs queued so far to be written (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.queued.size) {
        const ids = [...this.queued].slice(0, BATCH);
        for (const id of ids) this.queued.delete(id);
        await this.scan(ids).catch((err) => this.log.error('signing failures failed', { runIds: ids.length, err }));
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Signs the failures of these runs (those finished; the others are skipped). */
  async scan(runIds: readonly string[]): Promise<void> {
    const created = await this.store.record(await this.source.runs(runIds));
    if (created.length) this.options.onNewClusters?.(created);
  }

  /**
   * Backfill: signs finished runs after the watermark, `maxBatches` batches at most; answers how many
   * runs it read. One sweep at a time in this process.
   */
  sweep(maxBatches = 20): Promise<number> {
    this.sweeping ??= this.walk(maxBatches).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /**
   * A batch that cannot be written is tried run by run: a run that alone fails is logged and passed
   * over (the watermark must not stop behind it for ever); when every run fails, the cause is not
   * one run (a lost connection) and the error stops the sweep before the watermark moves.
   */
  private async scanOrSkip(ids: string[]): Promise<void> {
    try {
      await this.scan(ids);
    } catch (batchError) {
      const failed: string[] = [];
      for (const id of ids) await this.scan([id]).catch(() => failed.push(id));
      if (failed.length === ids.length) throw batchError;
      this.log.error('runs left unsigned: their failures could not be written', { runIds: failed, err: batchError });
    }
  }

  private async walk(maxBatches: number): Promise<number> {
    let after = await this.store.progress();
    let total = 0;
    const before = new Date(Date.now() - Math.min(SETTLE_MAX_MS, 5 * this.options.sweepMs));
    for (let i = 0; i < maxBatches; i++) {
      const runs = await this.source.finishedRuns(after, before, BATCH);
      if (runs.length === 0) break;
      await this.scanOrSkip(runs.map((r) => r.id));
      after = runs[runs.length - 1]!;
      await this.store.advance(after);
      total += runs.length;
      if (runs.length < BATCH) break;
    }
    return total;
  }
}
