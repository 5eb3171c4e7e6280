// Which projects have an active webhook subscription, kept in memory so that a change of a project
// without one (most OTP runs) is written without the outbox's read and its own transaction.
//
// Kept true: a subscription written in this process marks its project as subscribed at once, inside
// the write's transaction, for PIN_MS; every write of a subscription, by any process or by hand, is
// announced at commit by a trigger (db/migrations/011) and makes every process forget the project;
// an answer read from the database is kept for TTL_MS at most. A subscription created in another
// process takes effect here when its notice arrives (milliseconds; docs/webhooks.md).
import type { WebhookSubscriptions } from '../artifacts/index.js';

/** How long an answer read from the database is trusted without a notice. */
const TTL_MS = 30_000;
/** How long a subscription written here keeps its project marked, whatever notices say. */
const PIN_MS = 10_000;
/** Past this many projects, expired answers are dropped before another is kept. */
const MAX_ENTRIES = 10_000;

interface Entry {
  subscribed: boolean;
  until: number;
  pinned: boolean;
}

export class SubscribedProjects {
  private readonly entries = new Map<string, Entry>();
  // Bumped whenever an entry is forgotten: a read that started before must not store its answer.
  private epoch = 0;

  constructor(
    private readonly subscriptions: Pick<WebhookSubscriptions, 'anyActive'>,
    private readonly now: () => number = Date.now,
  ) {}

  async subscribed(projectId: string): Promise<boolean> {
    const entry = this.entries.get(projectId);
    if (entry && this.now() < entry.until) return entry.subscribed;
    const epoch = this.epoch;
    const subscribed = await this.subscriptions.anyActive(projectId);
    const current = this.entries.get(projectId);
    if (epoch === this.epoch && !(current?.pinned && this.now() < current.until)) {
      if (this.entries.size >= MAX_ENTRIES) this.dropExpired();
      this.entries.set(projectId, { subscribed, until: this.now() + TTL_MS, pinned: false });
    }
    return subscribed;
  }

  /** A subscription of the project is being written here: it counts as subscribed from now. */
  pin(projectId: string): void {
    this.epoch++;
    this.entries.set(projectId, { subscribed: true, until: this.now() + PIN_MS, pinned: true });
  }

  /** A subscription of the project changed (the trigger's notice): read it again when next asked. */
  forget(projectId: string): void {
    this.epoch++;
    const entry = this.entries.get(projectId);
    if (entry?.pinned && this.now() < entry.until) return;
    this.entries.delete(projectId);
  }

  /** Notices may have been missed (the listening connection was lost): read every project again. */
  forgetAll(): void {
    this.epoch++;
    for (const [projectId, entry] of this.entries)
      if (!entry.pinned || this.now() >= entry.until) this.entries.delete(projectId);
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [projectId, entry] of this.entries) if (now >= entry.until) this.entries.delete(projectId);
  }
}
