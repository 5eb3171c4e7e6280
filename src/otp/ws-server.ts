// The uWebSockets.js adapter: authentication at the upgrade, bytes in and out, backpressure.
// Protocol logic lives in ExecutorSession; nothing here parses frames.
import uWS from 'uWebSockets.js';
import type { WebSocket } from 'uWebSockets.js';
import type { Principal } from '../auth/principal.js';
import { hasScope } from '../auth/principal.js';
import { CloseCode, OtpErrorCode } from '../../machines/types.js';
import { errorFrame } from './frames.js';
import type { ExecutorSession } from './session.js';
import type { OtpEngine } from './engine.js';
import type { Logger } from '../log.js';

interface SocketData {
  principal?: Principal;
  refusal?: { code: number; message: string };
  session?: ExecutorSession;
  closed?: boolean;
}

export interface WsServerDeps {
  engine: OtpEngine;
  authenticate(secret: string): Promise<Principal | null>;
  log: Logger;
  maxFrameBytes: number;
}

// Frames above the protocol limit (1 MiB) get an error frame and a 1009 close; uWS itself cuts
// anything beyond this larger hard limit without a word.
const HARD_FRAME_LIMIT = 4 * 1024 * 1024;
// A client that stops reading: after this much buffered output it is disconnected, never silently dropped.
const MAX_BACKPRESSURE = 4 * 1024 * 1024;

function bearer(header: string, token: string): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? (token || undefined);
}

export class WsServer {
  private readonly app = uWS.App();
  private listenSocket?: uWS.us_listen_socket;

  constructor(private readonly deps: WsServerDeps) {
    const { engine } = deps;
    this.app.ws<SocketData>('/otp', {
      maxPayloadLength: HARD_FRAME_LIMIT,
      maxBackpressure: MAX_BACKPRESSURE,
      closeOnBackpressureLimit: 1, // a flag, typed as a number by uWS
      // Keepalive is the protocol's own ping/pong, driven by the session machine.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      upgrade: (res, req, context) => {
        // Copy everything out of req before the first await: it is only valid in this call.
        const secret = bearer(req.getHeader('authorization'), req.getQuery('token') ?? '');
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        let aborted = false;
        res.onAborted(() => {
          aborted = true;
        });
        this.authorise(secret).then((data) => {
          if (aborted) return;
          res.cork(() => res.upgrade<SocketData>(data, key, protocol, extensions, context));
        });
      },
      open: (ws: WebSocket<SocketData>) => {
        const data = ws.getUserData();
        if (data.refusal) {
          // A browser cannot read an HTTP 401 on upgrade: accept, explain, close with a 44xx code.
          ws.send(errorFrame(OtpErrorCode.auth, data.refusal.message));
          ws.end(data.refusal.code, data.refusal.message);
          return;
        }
        // The session (an actor, timers, allocations) is made just after `open` returns, not inside
        // it: with this uWS build, a garbage collection during `open` of an upgrade completed
        // asynchronously (after the key check) sometimes closes the new socket at once (1006 on
        // both sides, about 1 handshake in 1,000 under load; measured by the benchmarks). A
        // microtask still runs before uWS can deliver the first frame of this socket.
        queueMicrotask(() => {
          if (data.closed) return;
          data.session = engine.connect(data.principal!, {
            send: (text) => {
              if (!data.closed) ws.send(text, false);
            },
            close: (code, reason) => {
              // A close reason may hold at most 123 bytes.
              if (!data.closed) ws.end(code, Buffer.from(reason).subarray(0, 123).toString());
            },
          });
        });
      },
      message: (ws, message) => {
        const session = ws.getUserData().session;
        if (!session) return;
        if (message.byteLength > deps.maxFrameBytes) return session.frameTooLarge(message.byteLength);
        // The ArrayBuffer is only valid during this call: decode it now.
        session.handleText(Buffer.from(message).toString('utf8'));
      },
      close: (ws, code, message) => {
        const data = ws.getUserData();
        data.closed = true;
        data.session?.socketClosed(code, Buffer.from(message).toString('utf8') || `socket closed (${code})`);
      },
    });
  }

  private async authorise(secret: string | undefined): Promise<SocketData> {
    if (!secret) return { refusal: { code: CloseCode.unauthorized, message: 'credentials required: Authorization: Bearer <key> or ?token=<key>' } };
    let principal: Principal | null = null;
    try {
      principal = await this.deps.authenticate(secret);
    } catch (err) {
      this.deps.log.error('authentication failed', { err });
    }
    if (!principal) return { refusal: { code: CloseCode.unauthorized, message: 'the key is unknown or revoked' } };
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
