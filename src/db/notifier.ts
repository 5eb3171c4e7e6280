// Wake-ups between service processes over PostgreSQL LISTEN/NOTIFY: one listening connection per
// process, one channel, JSON messages tagged with the sender so a process skips its own. Each part
// of the service subscribes to the kinds of notice it cares about where it is built (`on`); nothing
// routes them centrally.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from '../log.js';
import type { Db } from './connect.js';

export type Notice =
  | { kind: 'dispatch'; projectId: string; sessionId?: string }
  | { kind: 'cancel'; runId: string }
  | { kind: 'revoke'; keyId: string }
  | { kind: 'project'; projectId: string }
  // Sent by a trigger (db/migrations/005) when a run's evidence files change.
  | { kind: 'run-view'; runId: string }
  // A recording started or stopped over REST on a session another process holds: it sends the frame.
  | {
      kind: 'record';
      frame: 'start' | 'stop';
      sessionId: string;
      recordingId: string;
      title?: string;
      url?: string;
      testCaseId?: string;
      reason?: string;
    }
  // Webhook deliveries were written (sent at commit by the outbox, to every process, the sender too).
  | { kind: 'webhooks' }
  // Sent by triggers (db/migrations/011) when a webhook subscription is written or deleted.
  | { kind: 'webhook-subscriptions'; projectId: string }
  // Sent by triggers (db/migrations/008) when a run or a session changes, for the console's live pages.
  | { kind: 'run-live'; runId: string; projectId: string; status: string }
  | { kind: 'session-live'; sessionId: string; projectId: string }
  // An executor asks process `to` to resume a session that process `holder` holds: the holder transfers
  // the session and its runs (engine/transfers.ts), then answers `handed-off` (`ok` false: it could not).
  | { kind: 'handoff'; sessionId: string; holder: string; to: string }
  // The holder heard these asks and is working on them: the asker waits for `handed-off` longer than
  // it waits for a holder that may be gone (a draining process answers thousands in turn).
  | { kind: 'handoff-ack'; sessionIds: string[]; to: string }
  // `finished`: runs of the session that ended while it was detached, whose run.finished the holder had not delivered.
  | { kind: 'handed-off'; sessionId: string; to: string; ok: boolean; finished?: string[] };

export type NoticeKind = Notice['kind'];
export type NoticeOf<K extends NoticeKind> = Extract<Notice, { kind: K }>;

/** Notices of every process: sent with `notify`, heard by kind with `on`. */
export interface Notices {
  notify(notice: Notice): Promise<void>;
  /** Calls `handler` with every notice of `kind` another process (or a trigger) sends; answers the unsubscribe. */
  on<K extends NoticeKind>(kind: K, handler: (notice: NoticeOf<K>) => void): () => void;
  /**
   * Calls `handler` when the listening connection is back after it was lost: notices sent meanwhile
   * were missed, so whatever they would have changed must be forgotten or looked up.
   */
  onReconnected(handler: () => void): () => void;
}

type NoticeEvents = { [K in NoticeKind]: [NoticeOf<K>] } & { reconnected: [] };

const CHANNEL = 'otp_events';

// After the listening connection drops, the first retry waits this long, doubling up to the cap.
const RECONNECT_MS = 500;
const RECONNECT_MAX_MS = 10_000;

/**
 * A notice sent inside `trx`: PostgreSQL delivers it when the transaction commits (never if it rolls
 * back), to every listening process, this one included (it carries no sender).
 */
export async function notifyAtCommit(trx: Db, notice: Notice): Promise<void> {
  await trx.raw('SELECT pg_notify(?, ?)', [CHANNEL, JSON.stringify(notice)]);
}

export class Notifier implements Notices {
  private client?: pg.Client;
  private stopped = false;
  private readonly subscribers = new EventEmitter<NoticeEvents>();
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly url: string,
    private readonly instanceId: string,
    private readonly log: Logger,
  ) {}

  on<K extends NoticeKind>(kind: K, handler: (notice: NoticeOf<K>) => void): () => void {
    const listener = handler as (...args: NoticeEvents[NoticeKind]) => void;
    this.subscribers.on(kind, listener as never);
    return () => this.subscribers.off(kind, listener as never);
  }

  onReconnected(handler: () => void): () => void {
    this.subscribers.on('reconnected', handler);
    return () => this.subscribers.off('reconnected', handler);
  }

  /** Listens until stop(). A lost connection is opened again, and `onReconnected`'s handlers are called. */
  async listen(): Promise<void> {
    await this.connect();
  }

  private deliver(notice: Notice): void {
    (this.subscribers.emit as (kind: NoticeKind, notice: Notice) => boolean)(notice.kind, notice);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: `otp-notices ${this.instanceId}` });
    client.on('notification', (msg) => {
      try {
        const { from, ...notice } = JSON.parse(msg.payload ?? '{}');
        if (from !== this.instanceId) this.deliver(notice as Notice);
      } catch (err) {
        this.log.error('bad notification', { err });
      }
    });
    client.on('error', (err) => {
      if (!this.stopped) this.log.error('notification connection failed', { err });
    });
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.reconnect(RECONNECT_MS);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    this.client = client;
  }

  private reconnect(delayMs: number): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect().then(
        () => {
          this.log.info('notification connection restored');
          this.subscribers.emit('reconnected');
        },
        (err) => {
          this.log.error('notification connection could not be restored; retrying', { err, retryInMs: delayMs * 2 });
          this.reconnect(Math.min(delayMs * 2, RECONNECT_MAX_MS));
        },
      );
    }, delayMs);
    this.retry.unref();
  }

  /**
   * Sends at the end of this turn of the event loop, in one statement with every other notice sent
   * in it (a drain answers thousands of hand-overs; a burst of posts wakes the same listeners), in
   * the order they were given.
   */
  notify(notice: Notice): Promise<void> {
    const payload = JSON.stringify({ ...notice, from: this.instanceId });
    if (!this.batch) {
      const batch: string[] = [];
      this.batch = batch;
      this.batchSent = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.batch = undefined;
        return this.send(batch);
      });
    }
    this.batch.push(payload);
    return this.batchSent!;
  }

  private batch?: string[];
  private batchSent?: Promise<void>;

  private async send(payloads: string[]): Promise<void> {
    if (payloads.length === 1) await this.db.raw('SELECT pg_notify(?, ?)', [CHANNEL, payloads[0]!]);
    else await this.db.raw('SELECT count(pg_notify(?, p)) FROM unnest(?::text[]) AS p', [CHANNEL, payloads]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => {});
  }
}
