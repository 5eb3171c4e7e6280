// The uWebSockets.js adapter, the fast path: used where its native binding loads (index.ts).
// The upgrade is answered at once and the key is checked as the socket opens, before any frame is
// handled: an upgrade answered later, from a promise (res.cork + res.upgrade), loses the client's
// first frame about once in a hundred connections with this uWS build; and a refusal needs an open
// socket anyway, to carry its E_AUTH frame (a browser cannot read an HTTP 401).
import type { TemplatedApp, us_listen_socket, WebSocket } from 'uWebSockets.js';
import {
  HARD_FRAME_LIMIT,
  MAX_BACKPRESSURE,
  type OtpGateway,
  type SocketEvents,
  type TransportSocket,
  upgradeSecret,
} from './gateway.js';
import type { OtpTransport, UwsModule } from './port.js';

interface SocketData {
  /** The credentials copied out of the upgrade request; dropped once handed to the gateway. */
  secret?: string;
  events?: SocketEvents;
}

/** A uWS socket as the gateway sees it (a class: no closures per socket). */
class UwsSocket implements TransportSocket {
  constructor(private readonly ws: WebSocket<SocketData>) {}

  send(text: string): void {
    this.ws.send(text, false);
  }

  end(code: number, reason: string): void {
    this.ws.end(code, reason);
  }

  cork(fn: () => void): void {
    this.ws.cork(fn);
  }

  remoteAddress(): string {
    return Buffer.from(this.ws.getRemoteAddressAsText()).toString();
  }
}

export class UwsTransport implements OtpTransport {
  readonly name = 'uws' as const;
  private readonly app: TemplatedApp;
  private listenSocket?: us_listen_socket;

  constructor(
    private readonly uWS: UwsModule,
    gateway: OtpGateway,
  ) {
    this.app = uWS.App();
    this.app.ws<SocketData>('/otp', {
      maxPayloadLength: HARD_FRAME_LIMIT,
      maxBackpressure: MAX_BACKPRESSURE,
      closeOnBackpressureLimit: 1, // a flag, typed as a number by uWS
      // Keepalive is the protocol's own ping/pong, driven by the session machine.
      idleTimeout: 0,
      sendPingsAutomatically: false,
      upgrade: (res, req, context) => {
        res.upgrade<SocketData>(
          { secret: upgradeSecret(req.getHeader('authorization'), req.getQuery('token')) },
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
        // The gateway calls send and end only while the socket is open (uWS must not touch a closed one).
        data.events = gateway.accept(new UwsSocket(ws), secret);
      },
      message: (ws, message) => ws.getUserData().events?.message(message),
      close: (ws, code, message) => ws.getUserData().events?.closed(code, Buffer.from(message).toString('utf8')),
    });
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`could not listen for OTP on ${host}:${port}`));
        this.listenSocket = socket;
        resolve(this.uWS.us_socket_local_port(socket));
      });
    });
  }

  close(): void {
    if (this.listenSocket) this.uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}
