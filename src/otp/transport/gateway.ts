// What every OTP transport shares, whatever carries the bytes: credentials checked as the socket
// opens (an API key or an OAuth access token, resolved by src/auth/principals.ts), the frames that
// arrive meanwhile held in order, the session bound once the key is good, frame sizes enforced, and
// no exception ever let out into a socket library's callback. An adapter (uws.ts, ws.ts) only
// translates its library's events into accept() / message() / closed().

import { CloseCode, OtpErrorCode } from '../../../machines/types.js';
import type { Principal } from '../../auth/principal.js';
import { hasScope } from '../../auth/principal.js';
import { type Logger, throttledLog } from '../../log.js';
import type { Connection } from '../engine/session.js';
import { errorFrame } from '../protocol/frames.js';

/** One socket, as an adapter offers it to the gateway. */
export interface TransportSocket {
  /** Sends a text frame; an adapter closes a socket whose unread output passes MAX_BACKPRESSURE. */
  send(text: string): void;
  /** Starts the closing handshake (a reason is cut to the 123 bytes a close frame can hold). */
  end(code: number, reason: string): void;
  /** Runs fn with the socket's writes batched into as few packets as the library can. */
  cork(fn: () => void): void;
  remoteAddress(): string;
}

/** What the gateway answers for each accepted socket: the adapter calls these as its library reports. */
export interface SocketEvents {
  /** One whole frame. The bytes are read before this returns (uWS reuses its buffer). */
  message(data: ArrayBuffer | Uint8Array): void;
  closed(code: number, reason: string): void;
}

/** What the gateway needs of a session: frames in, the socket's end. ExecutorSession is one. */
export interface SocketSession {
  readonly id: string;
  handleText(text: string): void;
  frameTooLarge(bytes: number): void;
  socketClosed(code: number, reason: string): void;
}

export interface GatewayDeps {
  /** Binds a session to an authenticated socket (OtpEngine.connect). */
  engine: { connect(principal: Principal, conn: Connection): SocketSession };
  authenticate(secret: string): Principal | null | Promise<Principal | null>;
  log: Logger;
  maxFrameBytes: number;
  /** Counts a refused key (metrics). */
  refused?(): void;
  /** Reports a failure; true when it was an outage of the database (the executor may connect again later). */
  unavailable?(err: unknown): boolean;
  /** What an executor refused during an outage is told to wait, in ms. */
  retryAfterMs?: number;
}

// Frames above the protocol limit (1 MiB) get an error frame and a 1009 close; the adapters cut
// anything beyond this larger hard limit without reading it.
export const HARD_FRAME_LIMIT = 4 * 1024 * 1024;
// A client that stops reading: after this much buffered output it is disconnected, never silently dropped.
export const MAX_BACKPRESSURE = 4 * 1024 * 1024;
// An executor sends hello and waits for welcome; a client that pours frames in before its key is
// even checked is not following the protocol.
const MAX_EARLY_FRAMES = 8;
// A close frame's reason holds at most 123 bytes.
const MAX_CLOSE_REASON_BYTES = 123;

/** The credentials of an upgrade request: `Authorization: Bearer …`, else `?token=…`. */
export function upgradeSecret(authorization: string | undefined, token: string | null | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return match?.[1] ?? (token || undefined);
}

export function closeReason(reason: string): string {
  const bytes = Buffer.from(reason);
  return bytes.byteLength <= MAX_CLOSE_REASON_BYTES
    ? reason
    : bytes
        .subarray(0, MAX_CLOSE_REASON_BYTES)
        .toString()
        .replace(/\uFFFD$/, '');
}

interface Refusal {
  code: number;
  message: string;
  /** The error frame's code (E_AUTH when absent) and, for an outage, when to try again. */
  otpCode?: string;
  retryAfterMs?: number;
}

export class OtpGateway {
  // Anyone can provoke refusals: one line per address and reason a minute, with a count of the rest.
  private readonly refusedLog: ReturnType<typeof throttledLog>;

  constructor(private readonly deps: GatewayDeps) {
    this.refusedLog = throttledLog(deps.log);
  }

  /** A socket has opened with these credentials: check them, then bind a session to it. */
  accept(socket: TransportSocket, secret: string | undefined): SocketEvents {
    const accepted = new AcceptedSocket(socket, this.deps);
    void this.authorise(secret)
      .then(({ principal, refusal }) => {
        if (accepted.ended) return;
        if (refusal) return this.refuse(socket, refusal);
        accepted.bind(principal!);
      })
      .catch((err) => accepted.fail('could not open the session', err));
    return accepted;
  }

  private refuse(socket: TransportSocket, refusal: Refusal): void {
    // An outage is no refusal of the credentials (the database's health speaks of it).
    if (refusal.retryAfterMs === undefined) {
      const address = socket.remoteAddress();
      this.refusedLog(`${refusal.code}:${address}`, 'refused credentials', {
        transport: 'otp',
        code: refusal.code,
        address,
        reason: refusal.message,
      });
      this.deps.refused?.();
    }
    socket.cork(() => {
      const details =
        refusal.retryAfterMs === undefined ? undefined : { retryable: true, retryAfterMs: refusal.retryAfterMs };
      socket.send(errorFrame(refusal.otpCode ?? OtpErrorCode.auth, refusal.message, {}, details));
      socket.end(refusal.code, closeReason(refusal.message));
    });
  }

  private async authorise(secret: string | undefined): Promise<{ principal?: Principal; refusal?: Refusal }> {
    if (!secret)
      return {
        refusal: {
          code: CloseCode.unauthorized,
          message: 'credentials required: Authorization: Bearer <key or access token> or ?token=<key or access token>',
        },
      };
    let principal: Principal | null = null;
    try {
      principal = await this.deps.authenticate(secret);
    } catch (err) {
      // The key could not be checked because the database is away: not a bad key; come back later.
      if (this.deps.unavailable?.(err)) {
        const retryAfterMs = this.deps.retryAfterMs ?? 2_000;
        const message = `the service's database is unavailable: connect again in ${Math.ceil(retryAfterMs / 1000)} s`;
        return {
          refusal: { code: CloseCode.tryAgainLater, message, otpCode: OtpErrorCode.databaseUnavailable, retryAfterMs },
        };
      }
      this.deps.log.error('authentication failed', { err });
    }
    if (!principal)
      return {
        refusal: { code: CloseCode.unauthorized, message: 'the key or access token is unknown, expired or revoked' },
      };
    if (!hasScope(principal, 'write')) {
      return {
        refusal: {
          code: CloseCode.forbidden,
          message: `executors need a key with scope write; this key has ${principal.scope}`,
        },
      };
    }
    return { principal };
  }
}

/**
 * One accepted socket: what it delivers, to its session once bound (held until then), and the
 * session's Connection to it. A class, not closures: a fleet holds one per idle executor, and each
 * closure made per socket costs it (with tsx's kept function names) about 300 bytes.
 */
class AcceptedSocket implements SocketEvents {
  session: SocketSession | undefined;
  /** The socket has closed: nothing is sent on it any more. */
  ended = false;
  /** Frames (or the size of one too large) that arrive while the credentials are being checked. */
  private early: Array<string | number> | undefined = [];

  constructor(
    private readonly socket: TransportSocket,
    private readonly deps: GatewayDeps,
  ) {}

  /** The credentials are good: the session takes this socket, then the frames that waited. */
  bind(principal: Principal): void {
    const session = this.deps.engine.connect(principal, this);
    this.session = session;
    const held = this.early ?? [];
    this.early = undefined;
    try {
      this.socket.cork(() => {
        for (const frame of held) deliver(session, frame);
      });
    } catch (err) {
      this.fail('frame handling failed', err);
    }
  }

  fail(what: string, err: unknown): void {
    this.deps.log.error(what, { sessionId: this.session?.id, err });
    if (!this.ended) this.socket.end(CloseCode.internalError, 'internal error');
  }

  // The session's Connection.
  send(text: string): void {
    if (!this.ended) this.socket.send(text);
  }

  close(code: number, reason: string): void {
    if (!this.ended) this.socket.end(code, closeReason(reason));
  }

  // SocketEvents, as the adapter reports them.
  message(data: ArrayBuffer | Uint8Array): void {
    const { session } = this;
    if (session) {
      // An exception must never leave a socket library's callback: uWS would take the process down.
      try {
        deliver(session, this.read(data));
      } catch (err) {
        this.fail('frame handling failed', err);
      }
      return;
    }
    if (!this.early) return;
    if (this.early.length >= MAX_EARLY_FRAMES)
      return this.socket.end(CloseCode.protocolViolation, 'too many frames before the credentials were checked');
    this.early.push(this.read(data));
  }

  closed(code: number, reason: string): void {
    this.ended = true;
    this.session?.socketClosed(code, reason || `socket closed (${code})`);
  }

  /** A frame as the session takes it: its text, or its size when it is over the protocol's limit. */
  private read(data: ArrayBuffer | Uint8Array): string | number {
    return data.byteLength > this.deps.maxFrameBytes
      ? data.byteLength
      : Buffer.from(data as Uint8Array).toString('utf8');
  }
}

function deliver(session: SocketSession, frame: string | number): void {
  if (typeof frame === 'number') session.frameTooLarge(frame);
  else session.handleText(frame);
}
