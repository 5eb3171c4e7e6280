// The transfer of a session to another service process: an executor resumes (hello.resumeSessionId)
// on a process that does not hold its session, after a drain told it to reconnect elsewhere (4503),
// or because a load balancer sent its new connection to another process.
//
// Both sides talk through notices (LISTEN/NOTIFY) and PostgreSQL:
// 1. The process the executor reached (the requester) checks the session row (open, same project, held
//    by another process) and asks for it: `handoff` { sessionId, holder, to: itself }.
// 2. The holder acknowledges the asks as it hears them (`handoff-ack`), then, for every session asked of it
//    meanwhile at once (a drain hands thousands over): puts the session in `transferring` (its
//    machine: frames held, runs paused, no claim), waits until no write of its runs is in flight,
//    moves the sessions and their running runs to the requester in one transaction, stops their
//    drivers without deciding anything, ends its side (TRANSFERRED_OUT: 4409 on a socket still open),
//    and answers `handed-off` { ok: true } for each (the answers in one statement). A session it
//    cannot hand over (not held here, a write that does not end, the transaction failed) is answered
//    ok: false and goes on there.
// 3. The requester reads the runs with the outcomes already recorded, makes the new connection that
//    session, welcomes the executor (resumed) and drives each run on from its first step without an
//    outcome (run.start first, again). It also delivers the run.finished of runs that ended while the
//    session was detached on the holder.
// No acknowledgement within ANSWER_WAIT_MS while the holder no longer heart-beats (it is gone), or no
// answer within ACKED_WAIT_MS of one: the resume is refused. The notices keep the kinds `handoff` and
// `handed-off`, so that processes of the previous version still understand them during a rolling
// restart (one that does not acknowledge is waited for while it heart-beats).

import { CloseCode, OtpErrorCode } from '../../../machines/types.js';
import type { NoticeOf, Notices } from '../../db/notifier.js';
import type { Logger } from '../../log.js';
import { buildFrame } from '../protocol/frames.js';
import type { RunStore } from '../store/run-store.js';
import type { SessionTransferStore, TransferredRun, TransferredSessionRow } from '../store/session-transfer.js';
import type { RunDrivers } from './drivers.js';
import type { ExecutorSession } from './session.js';
import type { SessionRegistry } from './sessions.js';
import { ACKED_WAIT_MS, ANSWER_WAIT_MS, LONGEST_TRANSFER_WAIT_MS } from './transfer-waits.js';

// A write of a run being transferred normally ends within milliseconds.
const QUIET_WAIT_MS = 3_000;
// Sessions handed over in one transaction at most.
const GIVE_BATCH = 500;
// Session ids per acknowledgement (a notice's payload stays under PostgreSQL's 8,000 bytes).
const ACK_IDS = 100;

export interface SessionTransfersDeps {
  instanceId: string;
  store: SessionTransferStore;
  log: Logger;
  sessions: SessionRegistry;
  drivers: RunDrivers;
  runs: RunStore;
  notices?: Notices;
  /** Whether the holder heart-beat lately; without it, a holder silent for ANSWER_WAIT_MS is taken for gone. */
  holderBeats?: (instanceId: string) => Promise<boolean>;
}

type Answer = Pick<NoticeOf<'handed-off'>, 'ok' | 'finished'>;

interface Asking {
  answer(answer: Answer): void;
  acknowledged(): void;
}

const wait = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());

export class SessionTransfers {
  private readonly asking = new Map<string, Asking>();
  /** The sessions other processes asked for and not yet given, by the process that asked. */
  private readonly asked = new Map<string, Set<string>>();
  private giving = false;
  /** The asks heard in this turn of the event loop, to acknowledge at its end, by the process that asked. */
  private readonly unacknowledged = new Map<string, string[]>();

  constructor(private readonly deps: SessionTransfersDeps) {
    deps.sessions.on('resumeElsewhere', (greeter, sessionId, ref) => void this.ask(greeter, sessionId, ref));
    deps.notices?.on('handoff', (notice) => {
      if (notice.holder === deps.instanceId) this.heardAsk(notice.sessionId, notice.to);
    });
    deps.notices?.on('handoff-ack', (notice) => {
      if (notice.to !== deps.instanceId) return;
      for (const sessionId of notice.sessionIds) this.asking.get(sessionId)?.acknowledged();
    });
    deps.notices?.on('handed-off', (notice) => {
      if (notice.to === deps.instanceId) this.asking.get(notice.sessionId)?.answer(notice);
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

  /**
   * Asks `holder` for the session; its answer, or ok: false when none comes in time: ANSWER_WAIT_MS
   * for a holder that may be gone, and again while it heart-beats (a process answering thousands of
   * asks, or this one too busy to hear its acknowledgement, is slow, not gone), ACKED_WAIT_MS once it
   * said it is working on it; never past LONGEST_TRANSFER_WAIT_MS in all.
   */
  private async answerOf(sessionId: string, holder: string): Promise<Answer> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = Date.now() + LONGEST_TRANSFER_WAIT_MS;
    // Acknowledged, or answered: a silent holder's check in flight then changes nothing.
    let heard = false;
    const answered = new Promise<Answer>((resolve) => {
      const after = (ms: number, then: () => void) => {
        clearTimeout(timer);
        timer = setTimeout(then, Math.min(ms, deadline - Date.now())).unref();
      };
      const settle = (answer: Answer) => {
        heard = true;
        clearTimeout(timer);
        resolve(answer);
      };
      const refuse = () => settle({ ok: false });
      const silent = async () => {
        const beats = Date.now() < deadline && (await this.deps.holderBeats?.(holder).catch(() => false));
        if (!heard) beats ? after(ANSWER_WAIT_MS, () => void silent()) : refuse();
      };
      after(ANSWER_WAIT_MS, () => void silent());
      this.asking.set(sessionId, {
        answer: settle,
        acknowledged: () => {
          heard = true;
          after(ACKED_WAIT_MS, refuse);
        },
      });
    });
    try {
      await this.notify({ kind: 'handoff', sessionId, holder, to: this.deps.instanceId });
      return await answered;
    } finally {
      clearTimeout(timer);
      this.asking.delete(sessionId);
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

  // ---- the holder's side ---------------------------------------------------------------------

  /**
   * An ask heard: acknowledged at once (with the others heard in this turn), given with the others
   * asked meanwhile once the hand-over before it is done.
   */
  private heardAsk(sessionId: string, to: string): void {
    let sessions = this.asked.get(to);
    if (!sessions) this.asked.set(to, (sessions = new Set()));
    sessions.add(sessionId);
    let acks = this.unacknowledged.get(to);
    if (!acks) this.unacknowledged.set(to, (acks = []));
    acks.push(sessionId);
    if (this.unacknowledged.size === 1 && acks.length === 1) setImmediate(() => this.acknowledge());
    if (!this.giving) void this.giveAsked();
  }

  /** The asks heard since the last time, acknowledged: ACK_IDS session ids per notice. */
  private acknowledge(): void {
    for (const [to, sessionIds] of this.unacknowledged)
      for (let i = 0; i < sessionIds.length; i += ACK_IDS)
        void this.notify({ kind: 'handoff-ack', sessionIds: sessionIds.slice(i, i + ACK_IDS), to });
    this.unacknowledged.clear();
  }

  /** Hands over what was asked, in batches, until nothing waits. */
  private async giveAsked(): Promise<void> {
    this.giving = true;
    try {
      // The asks heard in this turn of the event loop join the first batch.
      await new Promise((resolve) => setImmediate(resolve));
      for (let next = this.nextBatch(); next; next = this.nextBatch()) await this.give(next.sessionIds, next.to);
    } finally {
      this.giving = false;
    }
  }

  private nextBatch(): { to: string; sessionIds: string[] } | undefined {
    for (const [to, sessions] of this.asked) {
      const sessionIds = [...sessions].slice(0, GIVE_BATCH);
      for (const id of sessionIds) sessions.delete(id);
      if (!sessions.size) this.asked.delete(to);
      return { to, sessionIds };
    }
    return undefined;
  }

  /** Hands these sessions over to `to` in one transaction, answering each. */
  private async give(sessionIds: string[], to: string): Promise<void> {
    const { instanceId, log } = this.deps;
    // Sent together at the end of this turn (db/notifier.ts).
    const sent: Promise<void>[] = [];
    const answer = (sessionId: string, ok: boolean, finished?: string[]) =>
      sent.push(this.notify({ kind: 'handed-off', sessionId, to, ok, ...(finished?.length ? { finished } : {}) }));
    const quiet = await Promise.all(sessionIds.map((id) => this.quieted(id)));
    const ready = quiet.filter((session): session is ExecutorSession => session !== undefined);
    for (const [i, id] of sessionIds.entries()) if (!quiet[i]) answer(id, false);
    let moved = new Set<string>();
    try {
      moved = await this.deps.store.transfer(
        ready.map((session) => session.id),
        instanceId,
        to,
      );
    } catch (err) {
      log.error('could not hand sessions over', { sessions: ready.length, to, err });
    }
    const given: ExecutorSession[] = [];
    for (const session of ready) {
      if (!moved.has(session.id)) {
        session.cancelTransfer();
        answer(session.id, false);
        continue;
      }
      // Every run the move took, a run claimed meanwhile included.
      const drivers = [...(session.runs?.values() ?? [])];
      for (const driver of drivers) this.deps.drivers.release(driver, session);
      log.info('session handed over to another process', { sessionId: session.id, to, runs: drivers.length });
      answer(session.id, true, session.heldFinishedRunIds());
      given.push(session);
    }
    // Ended here once the answers are sent: a drain waits for its sessions to end, so it never stops
    // the process with an answer unsent.
    await Promise.allSettled(sent);
    for (const session of given) session.transferredOut();
  }

  /** The session put in `transferring`, once no write of its runs is in flight; undefined when it cannot be handed over. */
  private async quieted(sessionId: string): Promise<ExecutorSession | undefined> {
    const session = this.deps.sessions.get(sessionId);
    if (!session?.resumable) return undefined;
    session.transferOut();
    const drivers = [...(session.runs?.values() ?? [])];
    const quiet = await Promise.race([Promise.all(drivers.map((d) => d.quiet())), wait(QUIET_WAIT_MS)]);
    if (quiet !== 'timeout' && !session.closed) return session;
    session.cancelTransfer();
    return undefined;
  }

  private async notify(notice: NoticeOf<'handoff' | 'handoff-ack' | 'handed-off'>): Promise<void> {
    await this.deps.notices?.notify(notice).catch((err) => this.deps.log.error('notify failed', { err }));
  }
}
