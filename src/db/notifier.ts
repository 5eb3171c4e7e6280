// Wake-ups between service processes over PostgreSQL LISTEN/NOTIFY: one listening connection per
// process, one channel, JSON messages tagged with the sender so a process skips its own.
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
  // An executor asks process `to` to resume a session that process `holder` holds: the holder hands
  // the session and its runs over (engine/handover.ts), then answers `handed-off` (`ok` false: it could not).
  | { kind: 'handoff'; sessionId: string; holder: string; to: string }
  // `finished`: runs of the session that ended while it was detached, whose run.finished the holder had not delivered.
  | { kind: 'handed-off'; sessionId: string; to: string; ok: boolean; finished?: string[] };

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

export class Notifier {
  private client?: pg.Client;
  private stopped = false;
  private handler: (notice: Notice) => void = () => {};
  private resumed: () => void = () => {};
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly url: string,
    private readonly instanceId: string,
    private readonly log: Logger,
  ) {}

  /**
   * Listens until stop(). A lost connection is opened again; `resumed` is then called, since
   * notices sent meanwhile were missed (whatever they would have invalidated must be forgotten).
   */
  async listen(handler: (notice: Notice) => void, resumed: () => void = () => {}): Promise<void> {
    this.handler = handler;
    this.resumed = resumed;
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: `otp-notices ${this.instanceId}` });
    client.on('notification', (msg) => {
      try {
        const { from, ...notice } = JSON.parse(msg.payload ?? '{}');
        if (from !== this.instanceId) this.handler(notice as Notice);
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
          this.resumed();
        },
        (err) => {
          this.log.error('notification connection could not be restored; retrying', { err, retryInMs: delayMs * 2 });
          this.reconnect(Math.min(delayMs * 2, RECONNECT_MAX_MS));
        },
      );
    }, delayMs);
    this.retry.unref();
  }

  async notify(notice: Notice): Promise<void> {
    await this.db.raw('SELECT pg_notify(?, ?)', [CHANNEL, JSON.stringify({ ...notice, from: this.instanceId })]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => {});
  }
}
