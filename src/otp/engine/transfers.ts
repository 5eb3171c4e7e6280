// The transfer of a session to another service process: an executor resumes (hello.resumeSessionId)
// on a process that does not hold its session, after a drain told it to reconnect elsewhere (4503),
// or because a load balancer sent its new connection to another process.
//
// Both sides talk through notices (LISTEN/NOTIFY) and PostgreSQL:
// 1. The process the executor reached (the requester) checks the session row (open, same project, held
//    by another process) and asks for it: `handoff` { sessionId, holder, to: itself }.
// 2. The holder puts the session in `transferring` (its machine: frames held, runs paused, no claim),
//    waits until no write of its runs is in flight, moves the session and its running runs to the
//    requester in one transaction, stops their drivers without deciding anything, ends its side
//    (TRANSFERRED_OUT: 4409 on a socket still open), and answers `handed-off` { ok: true }. A holder
//    that cannot (does not hold it, a write that does not end, the transaction failed) cancels the
//    transfer and answers ok: false; the session goes on there.
// 3. The requester reads the runs with the outcomes already recorded, makes the new connection that
//    session, welcomes the executor (resumed) and drives each run on from its first step without an
//    outcome (run.start first, again). It also delivers the run.finished of runs that ended while the
//    session was detached on the holder.
// No answer within ANSWER_WAIT_MS (the holder is gone): the resume is refused. The notices keep the
// kinds `handoff` and `handed-off`, so that processes of the previous version still understand them
// during a rolling restart.

import { CloseCode, OtpErrorCode } from '../../../machines/types.js';
import type { NoticeOf, Notices } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import { buildFrame } from '../protocol/frames.js';
import type { RunStore } from '../store/run-store.js';
import type { SessionTransferStore, TransferredRun, TransferredSessionRow } from '../store/session-transfer.js';
import type { RunDrivers } from './drivers.js';
import type { ExecutorSession } from './session.js';
import type { SessionRegistry } from './sessions.js';

const ANSWER_WAIT_MS = 5_000;
// A write of a run being transferred normally ends within milliseconds.
const QUIET_WAIT_MS = 3_000;

export interface SessionTransfersDeps {
  instanceId: string;
  store: SessionTransferStore;
  log: Logger;
  sessions: SessionRegistry;
  drivers: RunDrivers;
  runs: RunStore;
  notices?: Notices;
}

type Answer = Pick<NoticeOf<'handed-off'>, 'ok' | 'finished'>;

const wait = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export class SessionTransfers {
  private readonly answers = new Map<string, (answer: Answer) => void>();

  constructor(private readonly deps: SessionTransfersDeps) {
    deps.sessions.on('resumeElsewhere', (greeter, sessionId, ref) => void this.ask(greeter, sessionId, ref));
    deps.notices?.on('handoff', (notice) => {
      if (notice.holder === deps.instanceId) void this.give(notice.sessionId, notice.to);
    });
    deps.notices?.on('handed-off', (notice) => {
      if (notice.to === deps.instanceId) this.answers.get(notice.sessionId)?.(notice);
    });
  }

  /** The requester's side: ask the holder for the session, then take it in, or refuse the resume. */
  private async ask(greeter: ExecutorSession, sessionId: string, ref: string): Promise<void> {
    const { store, instanceId } = this.deps;
    try {
      const row = await store.session(sessionId);
      const held = row?.status === 'open' && row.instanceId !== instanceId;
      if (!row || !held || row.projectId !== greeter.principal.projectId) return greeter.refuseResume(sessionId, ref);
      const { ok, finished = [] } = await this.answerOf(sessionId, row.instanceId);
      if (!ok) return greeter.refuseResume(sessionId, ref);
      const runs = await store.transferredRuns(sessionId, instanceId);
      const ended = await store.finishedRuns(sessionId, finished);
      if (greeter.closed)
        return await this.abandon(
          sessionId,
          runs.map((r) => r.id),
        );
      this.takeIn(greeter, row, runs, ref);
      // The run.finished the holder held for the executor, delivered here.
      for (const { runId, ...payload } of ended)
        greeter.send(buildFrame('run.finished', { sessionId, runId }, { runId, ...payload }));
    } catch (err) {
      this.deps.log.error('could not take a session over from another process', { sessionId, err });
      greeter.refuseResume(sessionId, ref);
    }
  }

  /** Asks `holder` for the session; its answer, or ok: false when none comes in time. */
  private async answerOf(sessionId: string, holder: string): Promise<Answer> {
    const answered = new Promise<Answer>((resolve) => {
      this.answers.set(sessionId, resolve);
      void wait(ANSWER_WAIT_MS).then(() => resolve({ ok: false }));
    });
    try {
      await this.notify({ kind: 'handoff', sessionId, holder, to: this.deps.instanceId });
      return await answered;
    } finally {
      this.answers.delete(sessionId);
    }
  }

  /** `greeter` becomes the transferred session and drives its runs on from where they were. */
  private takeIn(greeter: ExecutorSession, row: TransferredSessionRow, runs: TransferredRun[], ref: string): void {
    this.deps.sessions.transferredIn(greeter, row);
    const drivers = runs.map((run) => this.deps.drivers.drive(run, greeter));
    // The runs' frames follow the welcome.
    greeter.welcomeTransferred(ref);
    for (const driver of drivers) driver.start();
    this.deps.log.info('session taken over from another process', { sessionId: greeter.id, runs: runs.length });
  }

  /** The session was transferred here but its new connection went away meanwhile: its runs end. */
  private async abandon(sessionId: string, runIds: string[]): Promise<void> {
    const reason = 'executor connection lost while its session moved to this process';
    await this.deps.runs.finishUndriven(runIds, { status: 'error', code: OtpErrorCode.internal, reason });
    await this.deps.runs.closeSession(sessionId, CloseCode.goingAway, reason);
  }

  /** The holder's side. */
  private async give(sessionId: string, to: string): Promise<void> {
    const answer = (ok: boolean, finished?: string[]) =>
      this.notify({ kind: 'handed-off', sessionId, to, ok, ...(finished?.length ? { finished } : {}) });
    const session = this.deps.sessions.get(sessionId);
    if (!session?.resumable) return void (await answer(false));
    session.transferOut();
    const drivers = [...session.runs.values()];
    const quiet = await Promise.race([Promise.all(drivers.map((d) => d.quiet())), wait(QUIET_WAIT_MS)]);
    if (quiet === 'timeout' || session.closed) {
      session.cancelTransfer();
      return void (await answer(false));
    }
    try {
      await this.deps.store.transfer(sessionId, this.deps.instanceId, to);
    } catch (err) {
      this.deps.log.error('could not hand a session over', { sessionId, to, err });
      session.cancelTransfer();
      return void (await answer(false));
    }
    // Every run the move took, a run claimed meanwhile included.
    for (const driver of [...session.runs.values()]) this.deps.drivers.release(driver, session);
    session.transferredOut();
    this.deps.log.info('session handed over to another process', { sessionId, to, runs: drivers.length });
    await answer(true, session.heldFinishedRunIds());
  }

  private async notify(notice: NoticeOf<'handoff' | 'handed-off'>): Promise<void> {
    await this.deps.notices?.notify(notice).catch((err) => this.deps.log.error('notify failed', { err }));
  }
}
