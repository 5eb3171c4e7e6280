// The OTP transport port: what the service needs of whatever carries OTP frames. Two adapters
// implement it (uws.ts, ws.ts) around one OtpGateway; index.ts picks one.
import type uWS from 'uWebSockets.js';

export type TransportName = 'uws' | 'ws';

export interface OtpTransport {
  readonly name: TransportName;
  /** Listens for upgrades at /otp; answers the port bound (0 picks a free one). */
  listen(host: string, port: number): Promise<number>;
  /** Stops taking new connections; open ones stay until their sessions close them. */
  close(): void;
}

/** The native uWebSockets.js module, as index.ts loads it. */
export type UwsModule = typeof uWS;
