// The OTP suites that test what a transport promises (handshake, credentials, frame limits, close
// codes, keepalive, backpressure, resume) run once per adapter this Node.js can load: uWebSockets.js
// where its native binding loads, `ws` always.
import { loadUws, type TransportName } from '../../src/otp/transport/index.js';

export const TRANSPORTS: readonly TransportName[] = loadUws().module ? ['uws', 'ws'] : ['ws'];

/** describe(title) once per transport, the transport named in the title and handed to the body. */
export function describeEachTransport(title: string, body: (transport: TransportName) => void): void {
  for (const transport of TRANSPORTS) describe(`${title} [${transport}]`, () => body(transport));
}
