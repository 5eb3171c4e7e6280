// What the composition root started, stopped in the reverse order: each part registers how it stops
// as soon as it is up, so that a start failing halfway stops what it had started, as a full stop does.
import type { Logger } from '../log.js';

export class Teardown {
  private readonly steps: Array<{ name: string; stop: () => unknown }> = [];
  private done?: Promise<void>;

  constructor(private readonly log: Logger) {}

  /** `stop` runs at teardown, before that of every part added earlier. */
  add(name: string, stop: () => unknown): void {
    this.steps.push({ name, stop });
  }

  /** The names of the parts to stop, in the order they will be (for tests and logs). */
  get order(): string[] {
    return this.steps.map((step) => step.name).reverse();
  }

  /** Stops every part, the last added first; one that fails is logged and the next one stops. Once. */
  run(): Promise<void> {
    return (this.done ??= this.unwind());
  }

  private async unwind(): Promise<void> {
    for (const { name, stop } of [...this.steps].reverse()) {
      try {
        await stop();
      } catch (err) {
        this.log.error('could not stop a part of the service', { part: name, err });
      }
    }
  }
}
