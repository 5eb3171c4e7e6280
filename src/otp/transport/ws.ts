// The `ws` adapter on node:http: runs on every Node.js, used where no uWebSockets.js native binding
// loads (index.ts). It keeps the uWS adapter's promises: the same path, credentials, hard frame limit
// (a larger frame closes 1009 unread), backpressure limit, and no transport-level pings (keepalive is
// the protocol's own ping/pong).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../../log.js';
import {
  HARD_FRAME_LIMIT,
  MAX_BACKPRESSURE,
  type OtpGateway,
  type SocketEvents,
  type TransportSocket,
  upgradeSecret,
} from './gateway.js';
import type { OtpTransport } from './port.js';

const OTP_PATH = '/otp';

/**
 * A `ws` socket as the gateway sees it. A class, and listeners shared by every socket (they find
 * their socket's events through `this`, the WebSocket): no closures made per socket.
 */
class WsSocket implements TransportSocket {
  events?: SocketEvents;

  constructor(
    private readonly ws: WebSocket,
    private readonly address: string,
  ) {
    sockets.set(ws, this);
  }

  send(text: string): void {
    this.ws.send(text);
    // The uWS adapter's closeOnBackpressureLimit: a reader that stopped reading is cut off.
    if (this.ws.bufferedAmount > MAX_BACKPRESSURE) this.ws.terminate();
  }

  end(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  // ws writes each frame with one call already; there is nothing more to batch.
  cork(fn: () => void): void {
    fn();
  }

  remoteAddress(): string {
    return this.address;
  }
}

const sockets = new WeakMap<WebSocket, WsSocket>();

function onMessage(this: WebSocket, data: Buffer): void {
  sockets.get(this)?.events?.message(data);
}

function onClose(this: WebSocket, code: number, reason: Buffer): void {
  sockets.get(this)?.events?.closed(code, reason.toString('utf8'));
}

export class WsTransport implements OtpTransport {
  readonly name = 'ws' as const;
  private readonly server = http.createServer((req, res) => {
    // Only WebSocket upgrades are served here; REST has its own listener.
    const otp = req.url?.split('?')[0] === OTP_PATH;
    res.writeHead(otp ? 426 : 404, { connection: 'close', 'content-type': 'text/plain' });
    res.end(otp ? 'OTP needs a WebSocket upgrade\n' : 'not found\n');
  });
  private readonly sockets = new WebSocketServer({
    noServer: true,
    maxPayload: HARD_FRAME_LIMIT,
    perMessageDeflate: false,
    clientTracking: false,
  });

  constructor(
    private readonly gateway: OtpGateway,
    private readonly log: Logger,
  ) {
    this.server.on('upgrade', (req, socket: Socket, head) => {
      const url = new URL(req.url ?? '/', 'ws://otp');
      if (url.pathname !== OTP_PATH) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      // Copied out before the handshake: the request object is not kept.
      const secret = upgradeSecret(req.headers.authorization, url.searchParams.get('token'));
      this.sockets.handleUpgrade(req, socket, head, (ws) => this.open(ws, secret, req.socket.remoteAddress ?? ''));
    });
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  private open(ws: WebSocket, secret: string | undefined, address: string): void {
    const socket = new WsSocket(ws, address);
    socket.events = this.gateway.accept(socket, secret);
    ws.on('message', onMessage);
    ws.on('close', onClose);
    // A protocol error (a frame over the hard limit, invalid UTF-8, a bad opcode) closes the socket
    // with its code; without a listener it would be thrown.
    ws.on('error', this.onError);
  }

  private readonly onError = (err: Error) => this.log.debug('OTP socket error', { err: err.message });

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): void {
    // Stops accepting; open sockets stay until the engine closes them (as with uWS).
    this.server.close();
  }
}
