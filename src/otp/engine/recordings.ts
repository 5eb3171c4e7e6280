// Recordings (docs/recording.md): an executor session records user actions, each arriving as one
// event.recorded frame that is stored before it is acknowledged; stopping turns the steps into a test
// case through the TestCaseSink port. Either side may start or stop one: the executor with its own
// record.start / record.stop frames, a person or agent over REST. The service always answers with
// record.start / record.stop frames of its own, so an executor handles both cases the same way.

import { OtpErrorCode } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { NoticeOf, Notices } from '../../db/notifier.js';
import { errors } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Logger } from '../../log.js';
import { buildFrame, errorFrame } from '../protocol/frames.js';
import type { EventRecordedPayload, TestCaseStep } from '../protocol/schemas/index.js';
import type { RecordingRow, RecordingStore, RecordingView, StoredStep } from '../store/recording-store.js';
import type { RunStore } from '../store/run-store.js';
import type { ExecutorSession } from './session.js';
import type { RecordingFrameType } from './session-deps.js';
import type { SessionRegistry } from './sessions.js';
import type { NewTestCase, TestCaseSink } from './test-case-source.js';

export type RecordNotice = NoticeOf<'record'>;

export interface RecordingsDeps {
  store: RecordingStore;
  runs: Pick<RunStore, 'sessionStatus'>;
  sink: TestCaseSink;
  /** Most events one recording keeps (the most steps a run may have). */
  maxEvents: number;
  /** The sessions this process holds: their recording frames, their ends. */
  sessions: SessionRegistry;
  /** How the process that holds a session hears of a recording asked for over REST. */
  notices?: Notices;
  log: Logger;
  /** Where a frame that meets a database outage waits to be stored. */
  health?: DatabaseHealth;
}

export interface StartRequest {
  title?: string;
  url?: string;
}

const defaultTitle = () => `Recording of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export class Recordings {
  /** Recording frames of one session are handled strictly in the order they arrived. */
  private readonly queues = new WeakMap<ExecutorSession, Promise<void>>();

  constructor(private readonly deps: RecordingsDeps) {
    deps.sessions.on('recordingFrame', (session, type, payload, ref) => this.frame(session, type, payload, ref));
    // The recording in progress keeps its steps (as a test case) before the session is marked closed.
    deps.sessions.beforeRowClose((session) =>
      this.sessionClosed(session).catch((err) =>
        deps.log.error('could not stop the recording of a closed session', { sessionId: session.id, err }),
      ),
    );
    deps.notices?.on('record', (notice) => this.deliver(notice));
  }

  // ---- frames from the executor ----------------------------------------------------------------

  /** record.start, record.stop and event.recorded of a session, in arrival order. */
  private frame(session: ExecutorSession, type: RecordingFrameType, payload: unknown, ref: string): void {
    const work = () => {
      if (type === 'event.recorded') return this.event(session, payload as EventRecordedPayload, ref);
      if (type === 'record.start') return this.executorStart(session, (payload ?? {}) as StartRequest, ref);
      return this.executorStop(session, (payload as { recordingId: string }).recordingId, ref);
    };
    void this.enqueue(session, () =>
      this.durable(work).catch((err) => {
        // Its cause goes to the log only: a driver's message may name the database's address.
        this.deps.log.error('recording frame failed', { sessionId: session.id, type, err });
        session.send(
          errorFrame(OtpErrorCode.internal, `the service could not handle ${type}`, { sessionId: session.id, ref }),
        );
      }),
    );
  }

  /**
   * The frame's work, tried again once the database is back when it meets an outage: the frames
   * behind it wait in the session's queue, so the order holds, and nothing is acknowledged before
   * it is stored.
   */
  private async durable(work: () => Promise<void>): Promise<void> {
    const { health } = this.deps;
    for (;;) {
      try {
        return await work();
      } catch (err) {
        if (!health?.report(err)) throw err;
        await health.whenAvailable();
        health.retriedWrite();
      }
    }
  }

  private enqueue(session: ExecutorSession, work: () => Promise<void>): Promise<void> {
    const next = (this.queues.get(session) ?? Promise.resolve()).then(work);
    this.queues.set(session, next);
    return next;
  }

  /** Resolves once every recording frame the session sent so far has been handled. */
  private drained(sessionId: string): Promise<void> {
    const session = this.deps.sessions.get(sessionId);
    return (session && this.queues.get(session)) ?? Promise.resolve();
  }

  private async event(session: ExecutorSession, payload: EventRecordedPayload, ref: string): Promise<void> {
    const stored = await this.deps.store.append(
      session.id,
      payload.recordingId,
      payload.step,
      payload.at,
      this.deps.maxEvents,
    );
    if (typeof stored === 'object') return session.send(buildFrame('ack', { sessionId: session.id, ref }));
    const why = {
      none: 'no recording is in progress on this session; send record.start first',
      other: `recording ${payload.recordingId} is not the one in progress on this session`,
      full: `the recording already holds ${this.deps.maxEvents} steps, the most a test case may run; stop it`,
    }[stored];
    session.send(
      errorFrame(OtpErrorCode.unexpected, `event.recorded not stored: ${why}`, { sessionId: session.id, ref }),
    );
  }

  private async executorStart(session: ExecutorSession, request: StartRequest, ref: string): Promise<void> {
    const { principal } = session;
    const row = await this.deps.store.insert({
      id: newId('rec'),
      tenantId: principal.tenantId,
      projectId: principal.projectId,
      sessionId: session.id,
      title: request.title ?? defaultTitle(),
      startUrl: request.url,
      startedBy: 'executor',
    });
    if (row === 'busy') {
      const active = await this.deps.store.activeOf(session.id);
      return session.send(
        errorFrame(
          OtpErrorCode.unexpected,
          `this session is already recording ${active?.id ?? ''}; stop it first`.trim(),
          { sessionId: session.id, ref },
          active ? { recordingId: active.id } : undefined,
        ),
      );
    }
    if (row === 'closed') return;
    session.send(buildFrame('record.start', { sessionId: session.id, ref }, { recordingId: row.id, title: row.title }));
  }

  private async executorStop(session: ExecutorSession, recordingId: string, ref: string): Promise<void> {
    const stopped = await this.deps.store.stop({ id: recordingId, sessionId: session.id }, 'stopped by the executor');
    if (!stopped) {
      const row = await this.deps.store.get(session.principal.projectId, recordingId);
      const why =
        !row || row.session_id !== session.id
          ? `recording ${recordingId} is not one of this session`
          : `recording ${recordingId} was already stopped`;
      return session.send(
        errorFrame(
          OtpErrorCode.unexpected,
          why,
          { sessionId: session.id, ref },
          row?.test_case_id ? { testCaseId: row.test_case_id } : undefined,
        ),
      );
    }
    const testCaseId = await this.makeTestCase(session.principal, stopped.row, stopped.steps);
    session.send(
      buildFrame(
        'record.stop',
        { sessionId: session.id, ref },
        { recordingId, ...(testCaseId ? { testCaseId } : {}), reason: 'stopped by the executor' },
      ),
    );
  }

  // ---- REST ------------------------------------------------------------------------------------

  async start(principal: Principal, sessionId: string, request: StartRequest): Promise<RecordingView> {
    const status = await this.deps.runs.sessionStatus(principal.projectId, sessionId);
    if (!status) throw errors.notFound('Session', sessionId);
    if (status !== 'open') throw errors.conflict(`Session ${sessionId} is closed`, { sessionId });
    const session = this.deps.sessions.get(sessionId);
    if (session && session.capabilities.record === false) {
      throw errors.conflict(`Session ${sessionId} declared it cannot record (capabilities.record is false)`, {
        sessionId,
      });
    }
    const row = await this.deps.store.insert({
      id: newId('rec'),
      tenantId: principal.tenantId,
      projectId: principal.projectId,
      sessionId,
      title: request.title ?? defaultTitle(),
      startUrl: request.url,
      startedBy: 'request',
    });
    if (row === 'closed') throw errors.conflict(`Session ${sessionId} is closed`, { sessionId });
    if (row === 'busy') {
      const active = await this.deps.store.activeOf(sessionId);
      throw errors.conflict(
        `Session ${sessionId} is already recording${active ? ` (${active.id})` : ''}; stop that recording first`,
        { sessionId, recordingId: active?.id },
      );
    }
    await this.tell({
      kind: 'record',
      frame: 'start',
      sessionId,
      recordingId: row.id,
      title: row.title,
      ...(request.url ? { url: request.url } : {}),
    });
    return this.view(principal.projectId, row.id);
  }

  async stop(principal: Principal, recordingId: string): Promise<RecordingView> {
    const { store } = this.deps;
    const row = await store.get(principal.projectId, recordingId);
    if (!row) throw errors.notFound('Recording', recordingId);
    if (row.status === 'stopped') {
      // A test case that could not be written the first time (a quota, say) is tried again.
      if (!row.test_case_id && row.event_count > 0) {
        await this.makeTestCase(principal, row, await store.stepsOf(row.id));
        return this.view(principal.projectId, recordingId);
      }
      throw errors.conflict(`Recording ${recordingId} was already stopped`, {
        recordingId,
        testCaseId: row.test_case_id,
      });
    }
    // Events the executor already sent are stored first (when this process holds its session).
    await this.drained(row.session_id);
    const stopped = await store.stop({ id: recordingId, projectId: principal.projectId }, 'stopped by request');
    if (!stopped) throw errors.conflict(`Recording ${recordingId} was already stopped`, { recordingId });
    const testCaseId = await this.makeTestCase(principal, stopped.row, stopped.steps);
    await this.tell({
      kind: 'record',
      frame: 'stop',
      sessionId: row.session_id,
      recordingId,
      reason: 'stopped by request',
      ...(testCaseId ? { testCaseId } : {}),
    });
    return this.view(principal.projectId, recordingId);
  }

  list(projectId: string, page: { limit?: number; cursor?: string; status?: string }) {
    return this.deps.store.list(projectId, page);
  }

  async view(projectId: string, recordingId: string): Promise<RecordingView> {
    const view = await this.deps.store.view(projectId, recordingId);
    if (!view) throw errors.notFound('Recording', recordingId);
    return view;
  }

  /** A finished recording posted whole (POST /otp/recordings): straight to a test case. */
  importTestCase(principal: Principal, testCase: NewTestCase): Promise<{ id: string } & Record<string, unknown>> {
    return this.deps.sink.createTestCase(principal, { labels: ['recorded'], ...testCase });
  }

  // ---- sessions --------------------------------------------------------------------------------

  /** The session closed: its recording in progress stops and keeps every step as a test case. */
  private async sessionClosed(session: ExecutorSession): Promise<void> {
    await this.queues.get(session);
    const stopped = await this.deps.store.stop({ sessionId: session.id }, 'session closed');
    if (stopped) await this.makeTestCase(session.principal, stopped.row, stopped.steps);
  }

  /** A recording asked for over REST on a session this process holds (here, or by notice from another process). */
  private deliver(notice: RecordNotice): void {
    const session = this.deps.sessions.get(notice.sessionId);
    if (!session) return;
    const { kind: _kind, frame, sessionId, ...payload } = notice;
    session.send(buildFrame(`record.${frame}`, { sessionId }, payload));
  }

  private async tell(notice: RecordNotice): Promise<void> {
    if (this.deps.sessions.get(notice.sessionId)) return this.deliver(notice);
    await this.deps.notices?.notify(notice).catch((err) => this.deps.log.error('notify failed', { err }));
  }

  /** The test case of a stopped recording (none for a recording without steps); its id. */
  private async makeTestCase(
    principal: Principal,
    row: RecordingRow,
    steps: StoredStep[],
  ): Promise<string | undefined> {
    if (!steps.length) {
      await this.deps.store.finish(row, undefined, 0);
      return undefined;
    }
    const source = row.start_url ? ` from ${row.start_url}` : '';
    const testCase = await this.deps.sink.createTestCase(principal, {
      title: row.title,
      description: `Recorded on executor session ${row.session_id}${source} (recording ${row.id}).`,
      // Each step passed the TestCaseStep schema when its event.recorded frame arrived.
      steps: steps as TestCaseStep[],
      labels: ['recorded'],
    });
    await this.deps.store.finish(row, testCase.id, steps.length);
    return testCase.id;
  }
}
