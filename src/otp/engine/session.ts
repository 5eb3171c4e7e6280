// One executor connection: the session machine, the effects it requests carried out, and the
// routing of inbound messages (frame-intake.ts reads them). It knows nothing of uWebSockets.js; the
// adapter hands it text and a Connection. Where the session is (welcomed, detached, moving to another
// process, closed) is read from its machine's snapshot; what happens to it is published on the
// process's SessionEvents (sessions.ts).
import type { InspectionEvent } from 'xstate';
import {
  type Capabilities,
  CloseCode,
  type HelloPayload,
  OtpErrorCode,
  type SessionEffect,
  type SessionOutput,
} from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import { newId } from '../../ids.js';
import { buildFrame, errorFrame } from '../protocol/frames.js';
import type { InboundMessage } from '../protocol/schemas/index.js';
import { type Refusal, readFrame } from './frame-intake.js';
import type { RunDriver } from './run-driver.js';
import { createSessionActor, type SessionActor, stopSessionActor } from './session-actors.js';
import type { Connection, SessionDeps as Deps } from './session-deps.js';
import { HeldFrames, welcomeFrame } from './session-frames.js';
import { SessionTrace } from './session-trace.js';

export type { Connection } from './session-deps.js';
export type SessionDeps = Deps<ExecutorSession>;

/** What the session of a transferred one keeps: its id and what its hello declared. */
export interface TransferredSession {
  id: string;
  capabilities: Capabilities;
  maxParallel: number;
}

export class ExecutorSession {
  /** A new id, or the id of the session this connection became (transferred from another process). */
  id: string;
  /** The runs it drives, by id: made with the first, dropped with the last (drivers.ts). An idle session holds no Map. */
  runs?: Map<string, RunDriver>;
  capabilities: Capabilities = {};
  maxParallel = 1;
  /** When the executor last answered a ping, ms since the epoch (0: never; a number, not a Date, held per session). */
  private lastPongMs = 0;
  /** What was sent while detached (made when the first frame is held). */
  private held?: HeldFrames;
  /** Set on a connection whose hello resumed another session: its frames go to that session. */
  private forward?: ExecutorSession;
  /** How the session ended, once published (its machine's output, or the failure that stopped it). */
  private output?: SessionOutput;
  /**
   * The socket this object was created for; `conn` is the session's current one. They differ once a
   * resume moved the session to a new socket: what the old socket still delivers is ignored.
   */
  private readonly socket: Connection;
  private readonly actor: SessionActor;
  /** Its machine's transitions, pings and pongs, in memory, for the console (session-trace.ts). */
  readonly trace = new SessionTrace(this);

  constructor(
    public principal: Principal,
    private conn: Connection,
    private readonly deps: SessionDeps,
  ) {
    this.id = newId('ots');
    this.socket = conn;
    // One machine, input and actor system for every session (session-actors.ts). Bound methods, not
    // arrows: under tsx each arrow keeps its name in a property of its own, ~300 bytes per session.
    this.actor = createSessionActor(this, deps.otp);
    this.actor.on('*', this.carryOut.bind(this));
    this.actor.start();
  }

  /**
   * The system's inspection of this session's actor: its transitions, and its end. No subscribe (an
   * observer Set and bound callbacks per session): an actor with a parent reports a failure to it,
   * never as an unhandled error, and both a failure and the final state show as its snapshot here.
   */
  inspected(event: InspectionEvent): void {
    if (event.type === '@xstate.microstep') return this.trace.microstep(event);
    if (event.type !== '@xstate.snapshot' || event.actorRef !== this.actor) return;
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status === 'done') this.finish(snapshot.output);
    else if (snapshot.status === 'error') this.failed('session actor failed', snapshot.error);
  }

  /** When the executor last answered a ping (shown by the console; not stored). */
  get lastPongAt(): Date | null {
    return this.lastPongMs ? new Date(this.lastPongMs) : null;
  }

  /** Welcomed (or resumed) and attached: it works. (Read for every frame: no `matches`, which parses its argument.) */
  get ready(): boolean {
    const { status, value } = this.actor.getSnapshot();
    return status === 'active' && typeof value === 'object' && 'ready' in value;
  }

  /** Ended (or stopped: a connection that resumed another session). */
  get closed(): boolean {
    return this.output !== undefined || this.actor.getSnapshot().status !== 'active';
  }

  /** No socket to send on (dropped, or the session is moving to another process): what is sent is held. */
  get detached(): boolean {
    const { value } = this.actor.getSnapshot();
    return value === 'detached' || value === 'transferring';
  }

  /** The session can be resumed: welcomed, and not closed (attached or detached). */
  get resumable(): boolean {
    const { status, value } = this.actor.getSnapshot();
    return status === 'active' && (value === 'detached' || (typeof value === 'object' && 'ready' in value));
  }

  /** Runs the session can take now; none when it declared replay false (a recorder, say). */
  get freeCapacity(): number {
    if (!this.ready || this.closed || this.capabilities.replay === false) return 0;
    return this.maxParallel - (this.runs?.size ?? 0);
  }

  /** Every effect the session machine requests arrives here, in the order the machine decided them. */
  private carryOut(effect: SessionEffect): void {
    try {
      switch (effect.type) {
        case 'registerSession':
          return void this.register(effect.hello).then(
            () => this.actor.send({ type: 'SESSION_REGISTERED' }),
            (err: unknown) => this.notRegistered(err),
          );
        case 'sendWelcome':
          return this.sendWelcome(effect.ref, effect.resumed);
        case 'detach':
          return this.detach(effect.reason);
        case 'reattach':
          return this.reattach();
        case 'sendPing':
          return this.send(buildFrame('ping', { sessionId: this.id }));
        case 'closeSocket':
          return this.conn.close(effect.code, effect.reason);
      }
    } catch (err) {
      // An effect that throws ends the session, as a failed actor would.
      this.failed('session effect failed', err);
      stopSessionActor(this.actor);
    }
  }

  private failed(message: string, err: unknown): void {
    this.deps.log.error(message, { sessionId: this.id, err });
    this.conn.close(CloseCode.internalError, 'internal error');
    this.finish({ code: CloseCode.internalError, reason: 'internal error' });
  }

  private sendWelcome(ref: string, resumed = false): void {
    const { otp } = this.deps;
    const { id: sessionId, maxParallel } = this;
    // A resumed session sends its welcome first, then what it held (reattach).
    this.send(welcomeFrame({ sessionId, ref, otp, apiUrl: this.deps.apiUrl(), maxParallel, resumed }));
    if (!resumed) this.deps.events.emit('ready', this, true);
  }

  private detach(reason: string): void {
    const windowMs = this.deps.otp.resumeWindowMs;
    this.deps.log.info('session detached; waiting to be resumed', { sessionId: this.id, reason, windowMs });
    for (const run of this.runs?.values() ?? []) run.detach();
    this.deps.events.emit('detached', this);
  }

  private reattach(): void {
    const held = this.held?.release() ?? [];
    for (const frame of held) this.conn.send(frame);
    for (const run of this.runs?.values() ?? []) run.resume();
    this.deps.log.info('session resumed', { sessionId: this.id, runs: this.runs?.size ?? 0, heldFrames: held.length });
    this.deps.events.emit('ready', this, false);
  }

  /**
   * The session could not be stored. An outage is the executor's to retry: it hears
   * E_DATABASE_UNAVAILABLE (answering its hello) before the socket closes with 1013. Anything else
   * closes with 1011; its cause goes to the log, never to the executor.
   */
  private notRegistered(err: unknown): void {
    const retryable = this.deps.unavailable?.(err) ?? false;
    if (retryable) {
      const retryAfterMs = this.deps.otp.helloRetryMs;
      const message = `the service's database is unavailable: say hello again in ${Math.ceil(retryAfterMs / 1000)} s`;
      const ref = this.actor.getSnapshot().context.helloRef ?? undefined;
      this.send(
        errorFrame(OtpErrorCode.databaseUnavailable, message, this.envelope(ref), { retryable: true, retryAfterMs }),
      );
    } else {
      this.deps.log.error('session not stored', { sessionId: this.id, err });
    }
    const message = retryable ? 'database unavailable' : 'the session could not be stored';
    this.actor.send({ type: 'SESSION_NOT_REGISTERED', message, retryable });
  }

  private async register(hello: HelloPayload): Promise<void> {
    const { principal, deps } = this;
    this.capabilities = hello.capabilities ?? {};
    this.maxParallel = this.capabilities.maxParallel ?? deps.otp.defaultMaxParallel;
    await deps.store.insertSession({
      id: this.id,
      tenantId: principal.tenantId,
      projectId: principal.projectId,
      keyId: principal.keyId,
      instanceId: deps.instanceId,
      executor: hello.executor,
      name: hello.name,
      version: hello.version,
      capabilities: this.capabilities,
      maxParallel: this.maxParallel,
    });
  }

  private finish(output: SessionOutput): void {
    if (this.output) return;
    this.output = output;
    this.deps.events.emit('closed', this, output);
  }

  /**
   * This connection's hello resumed `target`, a session of this process: the connection switches to
   * it, and this object steps aside without a trace.
   */
  switchTo(target: ExecutorSession, ref: string): void {
    this.forward = target;
    stopSessionActor(this.actor);
    target.takeConnection(this.conn, this.principal, ref);
  }

  /**
   * A new connection takes this session over (hello.resumeSessionId). When the old socket still
   * looked alive it is closed with 4409 once the new one has the session.
   */
  private takeConnection(conn: Connection, principal: Principal, ref: string): void {
    const old = this.detached ? undefined : this.conn;
    this.conn = conn;
    // The key of the new connection (of the same project) is the session's from now on: revoking it closes the session.
    this.principal = principal;
    this.actor.send({ type: 'RESUME', ref });
    old?.close(CloseCode.sessionTakenOver, 'session resumed on another connection');
  }

  /** The session named by hello.resumeSessionId cannot be resumed: say so; a plain hello may follow. */
  refuseResume(sessionId: string, ref: string): void {
    if (this.closed) return;
    this.actor.send({ type: 'RESUME_REFUSED' });
    this.unexpected(
      `session ${sessionId} cannot be resumed: unknown, of another project, closed, or past its resume window (its runs then ended as error). Send hello without resumeSessionId to open a new session`,
      ref,
    );
  }

  /** Close with 4503 (reconnect elsewhere), told first when to come back, and wait detached to be resumed there. */
  askToReconnectElsewhere(retryAfterMs = 0): void {
    const reason = 'service draining: reconnect and resume the session';
    if (this.ready && !this.detached)
      this.conn.send(buildFrame('reconnect', { sessionId: this.id }, { retryAfterMs, reason }));
    this.actor.send({ type: 'RECONNECT_ELSEWHERE', code: CloseCode.reconnect, reason });
  }

  /** This process hands the session over: from now on it is as if the socket had dropped (frames held, runs paused, no claim). */
  transferOut(): void {
    this.actor.send({ type: 'TRANSFER_OUT' });
  }

  /** The transfer did not happen: a session whose socket is still there goes on. */
  cancelTransfer(): void {
    this.actor.send({ type: 'TRANSFER_CANCELLED' });
  }

  /** The session and its runs are the other process's now: it ends here (4409 on a socket still open). */
  transferredOut(): void {
    this.actor.send({ type: 'TRANSFERRED_OUT' });
  }

  /** This connection's hello resumed a session another process transferred here: it becomes that session. */
  becomeTransferred(session: TransferredSession): void {
    this.id = session.id;
    this.capabilities = session.capabilities;
    this.maxParallel = session.maxParallel;
  }

  /** Welcomes the executor to its transferred session; its runs start after (their step.exec must follow it). */
  welcomeTransferred(ref: string): void {
    this.actor.send({ type: 'TRANSFERRED_IN', ref });
  }

  /** Runs whose run.finished is held (they ended while the session was detached). */
  heldFinishedRunIds(): string[] {
    return this.held?.finishedRunIds() ?? [];
  }

  send(frame: string): void {
    if (this.closed) return;
    if (!this.detached) return this.conn.send(frame);
    if (!(this.held ??= new HeldFrames()).hold(frame))
      this.deps.log.error('frame dropped: too many held for a detached session', { sessionId: this.id });
  }

  /** Service-initiated close (revoked key, shutdown). */
  close(code: number, reason: string): void {
    this.actor.send({ type: 'CLOSE', code, reason });
  }

  // What a socket delivers goes to the session it now serves (`forward` after a resume), and only
  // while it is that session's current socket.
  socketClosed(code: number, reason: string): void {
    const session = this.forward ?? this;
    if (this.socket === session.conn) session.actor.send({ type: 'SOCKET_CLOSED', code, reason });
  }

  frameTooLarge(bytes: number): void {
    const session = this.forward ?? this;
    if (this.socket === session.conn) session.tooLarge(bytes);
  }

  handleText(text: string): void {
    const session = this.forward ?? this;
    if (this.socket === session.conn) session.handleFrame(text);
  }

  /** A frame larger than the protocol allows: say so, then close (1009). */
  private tooLarge(bytes: number): void {
    const limit = this.deps.otp.maxFrameBytes;
    this.send(
      errorFrame(
        OtpErrorCode.invalidFrame,
        `frame of ${bytes} bytes exceeds the limit of ${limit} bytes`,
        this.envelope(),
      ),
    );
    this.close(CloseCode.tooBig, 'frame too large');
  }

  private handleFrame(text: string): void {
    if (this.closed) return;
    const receivedAt = performance.now();
    const intake = readFrame(text);
    if (intake.ok) return this.route(intake.message, receivedAt);
    this.refuse(intake);
  }

  private refuse({ version, reason, ref, details }: Refusal): void {
    if (!version) return this.invalid(reason, ref, details);
    this.send(errorFrame(OtpErrorCode.version, reason, this.envelope(ref)));
    this.close(CloseCode.version, 'unsupported protocol version');
  }

  /** A valid message, to what handles it. */
  private route(message: InboundMessage, receivedAt: number): void {
    const ref = message.id;
    if (message.type === 'hello') return this.hello(message.payload, ref);
    if (!this.ready)
      return this.unexpected(`${message.type} before the handshake finished; send hello and wait for welcome`, ref);
    if (message.sessionId !== this.id)
      return this.invalid(`sessionId ${message.sessionId} is not this session (${this.id})`, ref);
    switch (message.type) {
      case 'pong':
        this.lastPongMs = Date.now();
        return void this.actor.send({ type: 'PONG' });
      case 'step.result': {
        this.validFrame();
        const run = this.runs?.get(message.runId);
        if (!run) return this.unexpected(`run ${message.runId} is not running on this session`, ref);
        return run.stepResult(message.payload, ref, receivedAt);
      }
      case 'event.recorded':
      case 'record.start':
      case 'record.stop':
        this.validFrame();
        return void this.deps.events.emit('recordingFrame', this, message.type, message.payload, ref);
      default:
        // ack and error are accepted; they change no state.
        this.validFrame();
        if (message.type === 'error')
          this.deps.log.debug('executor reported an error', { sessionId: this.id, payload: message.payload });
    }
  }

  /**
   * FRAME_VALID does nothing but reset the count of invalid frames in a row: when there is none,
   * the actor is spared a macrostep per frame (a step.result is the hottest frame there is).
   */
  private validFrame(): void {
    if (this.actor.getSnapshot().context.strikes > 0) this.actor.send({ type: 'FRAME_VALID' });
  }

  private hello(hello: HelloPayload, ref: string): void {
    const state = this.actor.getSnapshot();
    if (state.matches('resuming')) return this.unexpected('a resume of this connection is still being answered', ref);
    if (!state.matches('awaitingHello')) return this.unexpected('hello was already received on this session', ref);
    if (hello.projectId && hello.projectId !== this.principal.projectId) {
      this.send(errorFrame(OtpErrorCode.auth, `the key does not belong to project ${hello.projectId}`, { ref }));
      return this.close(CloseCode.forbidden, 'project mismatch');
    }
    if (hello.resumeSessionId) {
      this.actor.send({ type: 'RESUME_ASKED' });
      return void this.deps.events.emit('resumeAsked', this, hello.resumeSessionId, ref);
    }
    this.actor.send({ type: 'HELLO', hello, ref });
  }

  private envelope(ref?: string) {
    return { ...(this.ready ? { sessionId: this.id } : {}), ...(ref ? { ref } : {}) };
  }

  private invalid(message: string, ref?: string, details?: Record<string, unknown>): void {
    this.send(errorFrame(OtpErrorCode.invalidFrame, message, this.envelope(ref), details));
    this.actor.send({ type: 'FRAME_INVALID', message });
  }

  private unexpected(message: string, ref?: string): void {
    this.send(errorFrame(OtpErrorCode.unexpected, message, this.envelope(ref)));
  }
}
