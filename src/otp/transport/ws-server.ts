// The uWebSockets.js adapter: authentication at the upgrade (an API key or an OAuth access token,
// resolved by src/auth/principals.ts), bytes in and out, backpressure.
// Protocol logic lives in ExecutorSession; nothing here parses frames.
import uWS from 'uWebSockets.js';
import type { WebSocket } from 'uWebSockets.js';
import type { Principal } from '../../auth/principal.js';
import { hasScope } from '../../auth/principal.js';
import { CloseCode, OtpErrorCode } from '../../../machines/types.js';
import { errorFrame } from '../protocol/frames.js';
import type { ExecutorSession } from '../engine/session.js';
import type { OtpEngine } from '../engine/engine.js';
import { throttledLog, type Logger } from '../../log.js';

interface SocketData {
  /** The credentials copied out of the upgrade request; dropped once checked. */
  secret?: string;
  /** Frames that arrived while the credentials were being checked (a size, for one too large). */
  early?: Array<string | number>;
  session?: ExecutorSession;
  closed?: boolean;
}

export interface WsServerDeps {
  engine: OtpEngine;
  authenticate(secret: string): Principal | null | Promise<Principal | null>;
  log: Logger;
  maxFrameBytes: number;
  /** Counts a refused key (metrics). */
  refused?(): void;
}

// Frames above the protocol limit (1 MiB) get an error frame and a 1009 close; uWS itself cuts
// anything beyond this larger hard limit without a word.
const HARD_FRAME_LIMIT = 4 * 1024 * 1024;
// A client that stops reading: after this much buffered output it is disconnected, never silently dropped.
const MAX_BACKPRESSURE = 4 * 1024 * 1024;
// An executor sends hello and waits for welcome; a client that pours frames in before its key is
// even checked is not following the protocol.
const MAX_EARLY_FRAMES = 8;

function bearer(header: string, token: string): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? (token || undefined);
}

export class WsServer {
  private readonly app = uWS.App();
  private listenSocket?: uWS.us_listen_socket;
  // Anyone can provoke refusals: one line per address and reason a minute, with a count of the rest.
  private readonly refusedLog: ReturnType<typeof throttledLog>;

  constructor(private readonly deps: WsServerDeps) {
    const { engine } = deps;
    this.refusedLog = throttledLog(deps.log);
    this.app.ws<SocketData>('/otp', {
      maxPayloadLength: HARD_FRAME_LIMIT,
      maxBackpressure: MAX_BACKPRESSURE,
      closeOnBackpressureLimit: 1, // a flag, typed as a number by uWS
      // Keepalive is the protocol's own ping/pong, driven by the session machine.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      // The upgrade is answered at once and the key is checked as the socket opens, before any frame
      // is handled. An upgrade answered later, from a promise (res.cork + res.upgrade), loses the
      // client's first frame about once in a hundred connections with this uWS build; and a refusal
      // needs an open socket anyway, to carry its E_AUTH frame (a browser cannot read an HTTP 401).
      upgrade: (res, req, context) => {
        res.upgrade<SocketData>(
          { secret: bearer(req.getHeader('authorization'), req.getQuery('token') ?? ''), early: [] },
          req.getHeader('sec-websocket-key'),
          req.getHeader('sec-websocket-protocol'),
          req.getHeader('sec-websocket-extensions'),
          context,
        );
      },
      open: (ws: WebSocket<SocketData>) => {
        const data = ws.getUserData();
        const secret = data.secret;
        data.secret = undefined;
        void this.authorise(secret)
          .then(({ principal, refusal }) => {
            if (data.closed) return;
            if (refusal) {
              const address = Buffer.from(ws.getRemoteAddressAsText()).toString();
              this.refusedLog(`${refusal.code}:${address}`, 'refused credentials', { transport: 'otp', code: refusal.code, address, reason: refusal.message });
              deps.refused?.();
              ws.cork(() => {
                ws.send(errorFrame(OtpErrorCode.auth, refusal.message));
                ws.end(refusal.code, refusal.message);
              });
              return;
            }
            const session = engine.connect(principal!, {
              send: (text) => {
                if (!data.closed) ws.send(text, false);
              },
              close: (code, reason) => {
                // A close reason may hold at most 123 bytes.
                if (!data.closed) ws.end(code, Buffer.from(reason).subarray(0, 123).toString());
              },
            });
            data.session = session;
            const early = data.early ?? [];
            data.early = undefined;
            try {
              ws.cork(() => {
                for (const frame of early) {
                  if (typeof frame === 'number') session.frameTooLarge(frame);
                  else session.handleText(frame);
                }
              });
            } catch (err) {
              deps.log.error('frame handling failed', { sessionId: session.id, err });
              if (!data.closed) ws.end(CloseCode.internalError, 'internal error');
            }
          })
          .catch((err) => {
            deps.log.error('could not open the session', { err });
            if (!data.closed) ws.end(CloseCode.internalError, 'internal error');
          });
      },
      message: (ws, message) => {
        const data = ws.getUserData();
        const tooLarge = message.byteLength > deps.maxFrameBytes;
        if (data.session) {
          // An exception must never leave a uWS callback: it would take the whole process down.
          try {
            if (tooLarge) return data.session.frameTooLarge(message.byteLength);
            // The ArrayBuffer is only valid during this call: decode it now.
            return data.session.handleText(Buffer.from(message).toString('utf8'));
          } catch (err) {
            deps.log.error('frame handling failed', { sessionId: data.session.id, err });
            if (!data.closed) ws.end(CloseCode.internalError, 'internal error');
            return;
          }
        }
        if (!data.early) return;
        if (data.early.length >= MAX_EARLY_FRAMES) {
          ws.end(CloseCode.protocolViolation, 'too many frames before the credentials were checked');
          return;
        }
        data.early.push(tooLarge ? message.byteLength : Buffer.from(message).toString('utf8'));
      },
      close: (ws, code, message) => {
        const data = ws.getUserData();
        data.closed = true;
        data.session?.socketClosed(code, Buffer.from(message).toString('utf8') || `socket closed (${code})`);
      },
    });
  }

  private async authorise(secret: string | undefined): Promise<{ principal?: Principal; refusal?: { code: number; message: string } }> {
    if (!secret) return { refusal: { code: CloseCode.unauthorized, message: 'credentials required: Authorization: Bearer <key or access token> or ?token=<key or access token>' } };
    let principal: Principal | null = null;
    try {
      principal = await this.deps.authenticate(secret);
    } catch (err) {
      this.deps.log.error('authentication failed', { err });
    }
    if (!principal) return { refusal: { code: CloseCode.unauthorized, message: 'the key or access token is unknown, expired or revoked' } };
    if (!hasScope(principal, 'write')) {
      return { refusal: { code: CloseCode.forbidden, message: `executors need a key with scope write; this key has ${principal.scope}` } };
    }
    return { principal };
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`could not listen for OTP on ${host}:${port}`));
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      });
    });
  }

  close(): void {
    if (this.listenSocket) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}
