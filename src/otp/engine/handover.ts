// Moving a session between service processes: an executor resumes (hello.resumeSessionId) on a
// process that does not hold its session: after a drain told it to reconnect elsewhere (4503), or
// because a load balancer sent its new connection to another process.
//
// Both sides talk through notices (LISTEN/NOTIFY) and PostgreSQL:
// 1. The process the executor reached (the requester) checks the session row (open, same project, held
//    by another process) and sends `handoff` { sessionId, to: itself }.
// 2. The holder suspends the session (frames held, runs paused), waits until no write of its runs is in
//    flight, moves the session and its running runs to the requester in one transaction, stops their
//    drivers without deciding anything, closes its side (4409 on a socket still open), and answers
//    `handed-off` { ok: true }. A holder that cannot (does not hold it, a write that does not end,
//    the transaction failed) answers ok: false and keeps the session.
// 3. The requester reads the runs with the outcomes already recorded, welcomes the executor (resumed)
//    and drives each run on from its first step without an outcome (run.start first, again). It also
//    delivers the run.finished of runs that ended while the session was detached on the holder.
// No answer within HANDOFF_WAIT_MS (the holder is gone): the resume is refused.

import { CloseCode } from '../../../machines/types.js';
import type { Notice } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import { buildFrame } from '../protocol/frames.js';
import type { AdoptedRun, ResumableSession, SessionHandOverStore } from '../store/session-handover.js';
import type { RunDriver } from './run-driver.js';
import type { ExecutorSession } from './session.js';

const HANDOFF_WAIT_MS = 5_000;
// A write of a run being handed over normally ends within milliseconds.
const QUIET_WAIT_MS = 3_000;

export interface HandOverHost {
  instanceId: string;
  store: SessionHandOverStore;
  log: Logger;
  sessions: ReadonlyMap<string, ExecutorSession>;
  notify(notice: Notice): Promise<void>;
  /** The engine forgets a driver stopped for a hand-over. */
  release(driver: RunDriver): void;
  /** `greeter` becomes the session handed over, with its runs. */
  adopt(greeter: ExecutorSession, session: ResumableSession, runs: AdoptedRun[], ref: string): void;
  /** The session was handed over but its new connection went away meanwhile: end its runs. */
  abandon(sessionId: string, runIds: string[]): Promise<void>;
}

const wait = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export class HandOvers {
  private readonly answers = new Map<string, (answer: { ok: boolean; finished?: string[] }) => void>();

  constructor(private readonly host: HandOverHost) {}

  handleNotice(notice: Extract<Notice, { kind: 'handoff' | 'handed-off' }>): void {
    if (notice.kind === 'handoff') {
      if (notice.holder === this.host.instanceId) void this.handOver(notice.sessionId, notice.to);
    } else if (notice.to === this.host.instanceId) this.answers.get(notice.sessionId)?.(notice);
  }

  /** The requester's side: ask the holder for the session, then adopt it, or refuse the resume. */
  async requestFromPeer(greeter: ExecutorSession, sessionId: string, ref: string): Promise<void> {
    const { host } = this;
    try {
      const row = await host.store.session(sessionId);
      if (
        row?.status !== 'open' ||
        row.projectId !== greeter.principal.projectId ||
        row.instanceId === host.instanceId
      ) {
        return greeter.refuseResume(sessionId, ref);
      }
      const answered = new Promise<{ ok: boolean; finished?: string[] }>((resolve) => {
        this.answers.set(sessionId, resolve);
        void wait(HANDOFF_WAIT_MS).then(() => resolve({ ok: false }));
      });
      await host.notify({ kind: 'handoff', sessionId, holder: row.instanceId, to: host.instanceId });
      const { ok, finished = [] } = await answered;
      this.answers.delete(sessionId);
      if (!ok) return greeter.refuseResume(sessionId, ref);
      const runs = await host.store.adoptedRuns(sessionId, host.instanceId);
      const ended = await host.store.finishedRuns(sessionId, finished);
      if (greeter.closed)
        return await host.abandon(
          sessionId,
          runs.map((r) => r.id),
        );
      host.adopt(greeter, row, runs, ref);
      // The run.finished the holder held for the executor, delivered here.
      for (const { runId, ...payload } of ended)
        greeter.send(buildFrame('run.finished', { sessionId, runId }, { runId, ...payload }));
    } catch (err) {
      host.log.error('could not take a session over from another process', { sessionId, err });
      greeter.refuseResume(sessionId, ref);
    }
  }

  /** The holder's side. */
  private async handOver(sessionId: string, to: string): Promise<void> {
    const { host } = this;
    const answer = (ok: boolean, finished?: string[]) =>
      host.notify({ kind: 'handed-off', sessionId, to, ok, ...(finished?.length ? { finished } : {}) });
    const session = host.sessions.get(sessionId);
    if (!session || session.handedOver || !session.resumable) return void (await answer(false));
    session.suspend();
    const drivers = [...session.runs.values()];
    const quiet = await Promise.race([Promise.all(drivers.map((d) => d.quiet())), wait(QUIET_WAIT_MS)]);
    if (quiet === 'timeout' || session.closed) {
      session.unsuspend();
      return void (await answer(false));
    }
    try {
      await host.store.handOver(sessionId, host.instanceId, to);
    } catch (err) {
      host.log.error('could not hand a session over', { sessionId, to, err });
      session.unsuspend();
      return void (await answer(false));
    }
    session.handedOver = true;
    // Every run the move took, a run claimed meanwhile included.
    for (const driver of [...session.runs.values()]) {
      driver.release();
      session.runs.delete(driver.id);
      host.release(driver);
    }
    session.close(CloseCode.sessionTakenOver, 'session resumed on another service process');
    host.log.info('session handed over to another process', { sessionId, to, runs: drivers.length });
    await answer(true, session.heldFinishedRunIds());
  }
}
