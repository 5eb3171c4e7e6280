// First come, first served (today's order, OTP_QUEUE=fifo) behind the simulation's queue interface:
// the baseline the queues benchmark sets the rule against.
import type { QueuedRun, StartedRun } from '../../src/otp/queue/model.js';

export class FifoQueue {
  private items: QueuedRun[] = [];
  private head = 0;
  private readonly withdrawn = new Set<string>();

  post(run: QueuedRun): void {
    this.items.push(run);
  }

  withdraw(run: QueuedRun): boolean {
    if (this.withdrawn.has(run.id)) return false;
    this.withdrawn.add(run.id);
    return true;
  }

  next(now: number): StartedRun | undefined {
    while (this.head < this.items.length) {
      const run = this.items[this.head++]!;
      if (this.withdrawn.delete(run.id)) continue;
      return { ...run, startedAt: now, asGate: false };
    }
    return undefined;
  }

  end(): void {}

  eligible(): boolean {
    for (let i = this.head; i < this.items.length; i++) if (!this.withdrawn.has(this.items[i]!.id)) return true;
    return false;
  }

  get waiting(): number {
    return this.items.length - this.head - this.withdrawn.size;
  }
}
