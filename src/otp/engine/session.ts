// One executor connection: the session machine, the effects it requests carried out, and the
// routing of inbound frames. It knows nothing of uWebSockets.js; the adapter hands it text and a
// Connection.
import { createActor, type Actor } from 'xstate';
import { sessionMachine } from '../../../machines/session.machine.js';
import { answer } from '../../../machines/effects.js';
import {
  CloseCode,
  OtpErrorCode,
  type Capabilities,
  type HelloPayload,
  type SessionEffect,
  type SessionEvent,
  type SessionOutput,
} from '../../../machines/types.js';
import { validateInbound } from '../protocol/validators.js';
import { buildFrame, errorFrame, majorVersion, OTP_VERSION } from '../protocol/frames.js';
import { newId } from '../../ids.js';
import type { Principal } from '../../auth/principal.js';
import type { RunDriver } from './run-driver.js';
import type { RunStore } from '../store/run-store.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../log.js';

/** What the socket adapter gives a session. */
export interface Connection {
  send(text: string): void;
  close(code: number, reason: string): void;
}

export interface SessionHooks {
  /** The welcome went out: the session may take runs. */
  ready(session: ExecutorSession): void;
  /** The session machine stopped; its runs must be finished. */
  closed(session: ExecutorSession, output: SessionOutput): void;
}

export interface SessionDeps {
  otp: Config['otp'];
  store: RunStore;
  instanceId: string;
  log: Logger;
  hooks: SessionHooks;
}

export class ExecutorSession {
  readonly id = newId('ots');
  readonly runs = new Map<string, RunDriver>();
  capabilities: Capabilities = {};
  maxParallel = 1;
  ready = false;
  closed = false;
  private readonly actor: Actor<typeof sessionMachine>;

  constructor(
    readonly principal: Principal,
    private readonly conn: Connection,
    private readonly deps: SessionDeps,
  ) {
    const { otp } = deps;
    // One machine for every session: each session only listens to its own actor's effects.
    this.actor = createActor(sessionMachine, {
      input: {
        keepaliveMs: otp.keepaliveSec * 1000,
        pongTimeoutMs: otp.pongTimeoutMs,
        helloTimeoutMs: otp.helloTimeoutMs,
        maxInvalidFrames: otp.maxInvalidFrames,
      },
    });
    this.actor.subscribe({
      complete: () => this.finish(this.actor.getSnapshot().output as SessionOutput),
      error: (err) => this.failed('session actor failed', err),
    });
    this.actor.on('*', (effect) => this.carryOut(effect));
    this.actor.start();
  }

  /** Every effect the session machine requests arrives here, in the order the machine decided them. */
  private carryOut(effect: SessionEffect): void {
    try {
      switch (effect.type) {
        case 'registerSession':
          return answer<SessionEvent>(
            this.register(effect.hello),
            this.actor.send,
            { type: 'SESSION_REGISTERED' },
            (message) => ({ type: 'SESSION_NOT_REGISTERED', message }),
          );
        case 'sendWelcome':
          return this.sendWelcome(effect.ref);
        case 'sendPing':
          return this.sendPing();
        case 'closeSocket':
          return this.conn.close(effect.code, effect.reason);
      }
    } catch (err) {
      // An effect that throws ends the session, as a failed actor would.
      this.failed('session effect failed', err);
      this.actor.stop();
    }
  }

  private failed(message: string, err: unknown): void {
    this.deps.log.error(message, { sessionId: this.id, err });
    this.conn.close(CloseCode.internalError, 'internal error');
    this.finish({ code: CloseCode.internalError, reason: 'internal error' });
  }

  private sendWelcome(ref: string): void {
    const { otp } = this.deps;
    this.send(
      buildFrame('welcome', { sessionId: this.id, ref }, {
        sessionId: this.id,
        serverTime: new Date().toISOString(),
        keepaliveSec: otp.keepaliveSec,
        limits: {
          maxFrameBytes: otp.maxFrameBytes,
          maxSteps: otp.maxSteps,
          stepTimeoutMs: otp.stepTimeoutMs,
          maxParallel: this.maxParallel,
          keepaliveSec: otp.keepaliveSec,
        },
      }),
    );
    this.ready = true;
    this.deps.hooks.ready(this);
  }

  private sendPing(): void {
    this.send(buildFrame('ping', { sessionId: this.id }));
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

  get freeCapacity(): number {
    return this.ready && !this.closed ? this.maxParallel - this.runs.size : 0;
  }

  send(frame: string): void {
    if (!this.closed) this.conn.send(frame);
  }

  /** Service-initiated close (revoked key, shutdown). */
  close(code: number, reason: string): void {
    this.actor.send({ type: 'CLOSE', code, reason });
  }

  socketClosed(code: number, reason: string): void {
    this.actor.send({ type: 'SOCKET_CLOSED', code, reason });
  }

  /** A frame larger than the protocol allows: say so, then close (1009). */
  frameTooLarge(bytes: number): void {
    this.send(errorFrame(OtpErrorCode.invalidFrame, `frame of ${bytes} bytes exceeds the limit of ${this.deps.otp.maxFrameBytes} bytes`, this.envelope()));
    this.close(CloseCode.tooBig, 'frame too large');
  }

  handleText(text: string): void {
    if (this.closed) return;
    const receivedAt = performance.now();
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.invalid('frame is not valid JSON');
    }
    if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return this.invalid('a frame must be a JSON object');
    const raw = frame as Record<string, unknown>;
    const ref = typeof raw.id === 'string' && raw.id.startsWith('msg_') ? raw.id : undefined;
    const major = majorVersion(raw.otp);
    if (major !== undefined && major !== OTP_VERSION.split('.')[0]) {
      this.send(errorFrame(OtpErrorCode.version, `protocol version ${String(raw.otp)} is not supported; this service speaks ${OTP_VERSION}`, this.envelope(ref)));
      return this.close(CloseCode.version, 'unsupported protocol version');
    }
    let result: ReturnType<typeof validateInbound>;
    try {
      result = validateInbound(frame);
    } catch {
      // The recursive schemas (locators nest through `within`) overflow the stack on absurd depths.
      return this.invalid('frame nests too deeply to be checked', ref);
    }
    if (!result.ok) {
      const summary = result.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      return this.invalid(`invalid frame: ${summary}`, ref, { fields: result.errors });
    }
    const { message } = result;
    if (message.type === 'hello') return this.hello(message.payload, ref!);
    if (!this.ready) return this.unexpected(`${message.type} before the handshake finished; send hello and wait for welcome`, ref);
    if (message.sessionId !== this.id) return this.invalid(`sessionId ${message.sessionId} is not this session (${this.id})`, ref);
    switch (message.type) {
      case 'pong':
        return void this.actor.send({ type: 'PONG' });
      case 'step.result': {
        this.validFrame();
        const run = this.runs.get(message.runId);
        if (!run) return this.unexpected(`run ${message.runId} is not running on this session`, ref);
        return run.stepResult(message.payload, ref, receivedAt);
      }
      default:
        // ack, error and event.recorded are accepted; they change no state yet.
        this.validFrame();
        if (message.type === 'error') this.deps.log.debug('executor reported an error', { sessionId: this.id, payload: message.payload });
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
    if (!this.actor.getSnapshot().matches('awaitingHello')) return this.unexpected('hello was already received on this session', ref);
    if (hello.projectId && hello.projectId !== this.principal.projectId) {
      this.send(errorFrame(OtpErrorCode.auth, `the key does not belong to project ${hello.projectId}`, { ref }));
      return this.close(CloseCode.forbidden, 'project mismatch');
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

  private finish(output: SessionOutput): void {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    this.deps.hooks.closed(this, output);
  }
}
