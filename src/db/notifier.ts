// Wake-ups between service processes over PostgreSQL LISTEN/NOTIFY: one listening connection per
// process, one channel, JSON messages tagged with the sender so a process skips its own.
import pg from 'pg';
import type { Db } from './connect.js';
import type { Logger } from '../log.js';

export type Notice =
  | { kind: 'dispatch'; projectId: string; sessionId?: string }
  | { kind: 'cancel'; runId: string }
  | { kind: 'revoke'; keyId: string }
  | { kind: 'project'; projectId: string }
  // Sent by a trigger (db/migrations/005) when a run's evidence files change.
  | { kind: 'run-view'; runId: string };

const CHANNEL = 'otp_events';

export class Notifier {
  private client?: pg.Client;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly url: string,
    private readonly instanceId: string,
    private readonly log: Logger,
  ) {}

  async listen(handler: (notice: Notice) => void): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (msg) => {
      try {
        const { from, ...notice } = JSON.parse(msg.payload ?? '{}');
        if (from !== this.instanceId) handler(notice as Notice);
      } catch (err) {
        this.log.error('bad notification', { err });
      }
    });
    client.on('error', (err) => {
      if (!this.stopped) this.log.error('notification connection failed', { err });
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  async notify(notice: Notice): Promise<void> {
    await this.db.raw('SELECT pg_notify(?, ?)', [CHANNEL, JSON.stringify({ ...notice, from: this.instanceId })]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => {});
  }
}
