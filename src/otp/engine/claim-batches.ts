// Claims of one project's sessions go to PostgreSQL together: those asked in the same event-loop
// turn, or while the project's previous claim was in flight, share one statement. Under the queue
// rule a claim locks the project's owners for its length, so claims of one project take turns across
// processes; one statement for every session with room (not one per session) keeps a pool's slots
// filled as fast as its runs end (migration 074, benchmarks/RESULTS.md "queues-live").
import type { ClaimedRun } from '../store/run-store.js';

/** Sends one claim for several sessions of a project; answers each session's runs. */
export type ClaimSender = (
  projectId: string,
  asks: Array<{ sessionId: string; limit: number }>,
) => Promise<Map<string, ClaimedRun[]>>;

interface Ask {
  limit: number;
  resolve: (runs: ClaimedRun[]) => void;
  reject: (err: unknown) => void;
}

export class ClaimBatches {
  /** Per project, the asks not sent yet. */
  private readonly waiting = new Map<string, Map<string, Ask>>();
  /** The projects with a claim statement in flight. */
  private readonly sending = new Set<string>();

  constructor(private readonly send: ClaimSender) {}

  /**
   * Up to `limit` queued runs for the session, claimed with those asked for the project's other
   * sessions meanwhile. A session asks once at a time (its claim is one at a time in Dispatch).
   */
  ask(projectId: string, sessionId: string, limit: number): Promise<ClaimedRun[]> {
    let asks = this.waiting.get(projectId);
    if (!asks) {
      asks = new Map();
      this.waiting.set(projectId, asks);
      if (!this.sending.has(projectId)) setImmediate(() => this.flush(projectId));
    }
    const pending = asks;
    return new Promise((resolve, reject) => pending.set(sessionId, { limit, resolve, reject }));
  }

  private flush(projectId: string): void {
    const asks = this.waiting.get(projectId);
    if (!asks) return;
    this.waiting.delete(projectId);
    this.sending.add(projectId);
    void this.sendAll(projectId, asks).finally(() => {
      this.sending.delete(projectId);
      // Asked while this claim was in flight: theirs is the next statement.
      if (this.waiting.has(projectId)) this.flush(projectId);
    });
  }

  private async sendAll(projectId: string, asks: Map<string, Ask>): Promise<void> {
    try {
      const claimed = await this.send(
        projectId,
        [...asks].map(([sessionId, ask]) => ({ sessionId, limit: ask.limit })),
      );
      for (const [sessionId, ask] of asks) ask.resolve(claimed.get(sessionId) ?? []);
    } catch (err) {
      for (const ask of asks.values()) ask.reject(err);
    }
  }
}
