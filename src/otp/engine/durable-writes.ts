// The durable writes of one run (its steps, its verdict), carried out and answered to its machine,
// through an outage of the database: a write that meets one tells the machine DB_UNAVAILABLE (it
// holds), waits for the database and is tried again, as often as it takes; it is answered once it is
// durable, unless a newer write replaced it meanwhile (the machine gave up on it: `abandoned`).
import { errorMessage } from '../../../machines/effects.js';
import type { RunEvent } from '../../../machines/types.js';
import type { DatabaseHealth } from '../../db/health.js';

// A write that a newer one replaced while it waited for the database: it is not answered.
const SUPERSEDED = Symbol('superseded');

export class DurableWrites {
  // Bumped by each write asked for: one waiting for the database that is no longer the newest gives up.
  private token = 0;

  /**
   * `send`: answers the run's machine; `active`: whether it still runs. Without `health`, an outage
   * fails the write like any other error.
   */
  constructor(
    private readonly send: (event: RunEvent) => void,
    private readonly active: () => boolean,
    private readonly health?: DatabaseHealth,
  ) {}

  /** Carries out `attempt` and answers the machine with `done`, or with `failed(message)`. */
  carryOut(attempt: () => Promise<unknown>, done: RunEvent, failed: (message: string) => RunEvent): void {
    const token = ++this.token;
    attempt()
      .catch((err) => this.afterOutage(err, attempt, token))
      .then(
        (value) => {
          if (value !== SUPERSEDED) this.send(done);
        },
        (err: unknown) => {
          if (token === this.token) this.send(failed(errorMessage(err)));
        },
      );
  }

  private async afterOutage(err: unknown, attempt: () => Promise<unknown>, token: number): Promise<unknown> {
    const { health } = this;
    if (!health?.report(err)) throw err;
    const release = health.hold();
    try {
      this.send({ type: 'DB_UNAVAILABLE' });
      for (;;) {
        await health.whenAvailable();
        if (token !== this.token || !this.active()) return SUPERSEDED;
        health.retriedWrite();
        try {
          return await attempt();
        } catch (again) {
          if (!health.report(again)) throw again;
        }
      }
    } finally {
      release();
    }
  }
}
