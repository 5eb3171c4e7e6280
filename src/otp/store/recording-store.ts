// Durable state of recordings (docs/recording.md): otp_recordings and otp_recording_events. Each
// event.recorded frame is one statement that numbers and stores it; stopping freezes the events (the
// row lock orders a stop after every event already being written).

import { type ChangeEvents, EventType, noChangeEvents } from '../../db/change-events.js';
import type { Db } from '../../db/connect.js';
import { type Page, paginate } from '../../rest/pagination.js';

/**
 * A recorded step as stored: a test case step ({ otp, label?, ... }) that the StoredStep schema of
 * otp/protocol passed on arrival. The store keeps it as JSON and does not look inside.
 */
export type StoredStep = { otp: unknown } & Record<string, unknown>;

export type RecordingStatus = 'recording' | 'stopped';

export interface RecordingRow {
  id: string;
  tenant_id: string;
  project_id: string;
  session_id: string;
  title: string;
  start_url: string | null;
  started_by: 'executor' | 'request';
  status: RecordingStatus;
  event_count: number;
  test_case_id: string | null;
  stop_reason: string | null;
  created_at: Date;
  stopped_at: Date | null;
}

export interface RecordedEvent {
  seq: number;
  step: StoredStep;
  at: string | null;
  receivedAt: string;
}

export interface NewRecording {
  id: string;
  tenantId: string;
  projectId: string;
  sessionId: string;
  title: string;
  startUrl?: string;
  startedBy: 'executor' | 'request';
}

/** Why an event was not stored. */
export type AppendRefusal = 'none' | 'other' | 'full';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function recordingView(row: RecordingRow) {
  return {
    id: row.id,
    recordingId: row.id,
    projectId: row.project_id,
    sessionId: row.session_id,
    title: row.title,
    startUrl: row.start_url,
    startedBy: row.started_by,
    status: row.status,
    eventCount: row.event_count,
    testCaseId: row.test_case_id,
    stopReason: row.stop_reason,
    createdAt: iso(row.created_at)!,
    stoppedAt: iso(row.stopped_at),
  };
}
export type RecordingSummary = ReturnType<typeof recordingView>;
export type RecordingView = RecordingSummary & { events: RecordedEvent[] };

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === '23505';
}

export class RecordingStore {
  constructor(
    private readonly db: Db,
    private readonly changeEvents: ChangeEvents = noChangeEvents,
  ) {}

  /**
   * A new recording on an open session of the project. Answers 'closed' when the session is not open
   * (or not the project's), 'busy' when the session already records.
   */
  async insert(rec: NewRecording): Promise<RecordingRow | 'closed' | 'busy'> {
    try {
      const { rows } = await this.db.raw(
        `INSERT INTO otp_recordings (id, tenant_id, project_id, session_id, title, start_url, started_by)
         SELECT ?, ?, ?, s.id, ?, ?, ? FROM otp_sessions s WHERE s.id = ? AND s.project_id = ? AND s.status = 'open'
         RETURNING *`,
        [
          rec.id,
          rec.tenantId,
          rec.projectId,
          rec.title,
          rec.startUrl ?? null,
          rec.startedBy,
          rec.sessionId,
          rec.projectId,
        ],
      );
      return rows[0] ?? 'closed';
    } catch (err) {
      if (isUniqueViolation(err)) return 'busy';
      throw err;
    }
  }

  /** The recording the session is making now, if any. */
  async activeOf(sessionId: string): Promise<RecordingRow | undefined> {
    return this.db('otp_recordings').where({ session_id: sessionId, status: 'recording' }).first();
  }

  /**
   * Stores one event of the session's recording in progress (the one named, when `recordingId` is
   * given), numbered after the last: one statement. Answers its seq, or why it was refused.
   */
  async append(
    sessionId: string,
    recordingId: string | undefined,
    step: StoredStep,
    at: string | undefined,
    maxEvents: number,
  ): Promise<{ recordingId: string; seq: number } | AppendRefusal> {
    const { rows } = await this.db.raw(
      `WITH r AS (
         UPDATE otp_recordings SET event_count = event_count + 1
          WHERE session_id = ? AND status = 'recording' AND (?::text IS NULL OR id = ?) AND event_count < ?
          RETURNING id, event_count)
       INSERT INTO otp_recording_events (recording_id, seq, step, at)
       SELECT id, event_count, ?::jsonb, ?::timestamptz FROM r
       RETURNING recording_id, seq`,
      [sessionId, recordingId ?? null, recordingId ?? null, maxEvents, JSON.stringify(step), at ?? null],
    );
    if (rows[0]) return { recordingId: rows[0].recording_id, seq: rows[0].seq };
    const active = await this.activeOf(sessionId);
    if (!active) return 'none';
    if (recordingId && active.id !== recordingId) return 'other';
    return 'full';
  }

  async get(projectId: string, id: string): Promise<RecordingRow | undefined> {
    return this.db('otp_recordings').where({ id, project_id: projectId }).first();
  }

  async events(id: string): Promise<RecordedEvent[]> {
    const rows: Array<{ seq: number; step: StoredStep; at: Date | null; received_at: Date }> = await this.db(
      'otp_recording_events',
    )
      .where('recording_id', id)
      .orderBy('seq')
      .select('seq', 'step', 'at', 'received_at');
    return rows.map((r) => ({ seq: r.seq, step: r.step, at: iso(r.at), receivedAt: iso(r.received_at)! }));
  }

  async view(projectId: string, id: string): Promise<RecordingView | undefined> {
    const row = await this.get(projectId, id);
    return row && { ...recordingView(row), events: await this.events(id) };
  }

  list(projectId: string, page: { limit?: number; cursor?: string; status?: string }): Promise<Page<RecordingSummary>> {
    const query = this.db('otp_recordings').where('project_id', projectId);
    if (page.status) query.where('status', page.status);
    return paginate(query, page, recordingView);
  }

  /**
   * Stops a recording in progress (its events are final from here on) and answers it with its steps;
   * undefined when it was not in progress. `sessionId` limits it to that session's recording.
   */
  async stop(
    where: { projectId?: string; id?: string; sessionId?: string },
    reason: string,
  ): Promise<{ row: RecordingRow; steps: StoredStep[] } | undefined> {
    return this.db.transaction(async (trx) => {
      const query = trx('otp_recordings').where('status', 'recording');
      if (where.id) query.where('id', where.id);
      if (where.projectId) query.where('project_id', where.projectId);
      if (where.sessionId) query.where('session_id', where.sessionId);
      const [row] = (await query
        .update({ status: 'stopped', stopped_at: trx.fn.now(), stop_reason: reason })
        .returning('*')) as RecordingRow[];
      if (!row) return undefined;
      const steps: StoredStep[] = await trx('otp_recording_events')
        .where('recording_id', row.id)
        .orderBy('seq')
        .pluck('step');
      return { row, steps };
    });
  }

  /** The steps of a stopped recording (to make its test case again after a failed attempt). */
  async stepsOf(id: string): Promise<StoredStep[]> {
    return this.db('otp_recording_events').where('recording_id', id).orderBy('seq').pluck('step');
  }

  /**
   * Ends a stopped recording: keeps the test case made from it (none for an empty one) and reports
   * `recording.finished` to webhooks in the same transaction. False when it was finished already.
   */
  async finish(row: RecordingRow, testCaseId: string | undefined, stepCount: number): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const n = await trx('otp_recordings')
        .where({ id: row.id, status: 'stopped' })
        .whereNull('test_case_id')
        .update({ test_case_id: testCaseId ?? null });
      if (n === 0) return false;
      await this.changeEvents.record(trx, {
        type: EventType.recordingFinished,
        tenantId: row.tenant_id,
        projectId: row.project_id,
        data: {
          id: row.id,
          sessionId: row.session_id,
          name: row.title,
          stepCount,
          testCaseId: testCaseId ?? null,
          startedAt: new Date(row.created_at).toISOString(),
          finishedAt: new Date(row.stopped_at ?? Date.now()).toISOString(),
        },
      });
      return true;
    });
  }
}
