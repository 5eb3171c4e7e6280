// Picks the OTP transport: uWebSockets.js where its native binding loads on this Node.js and
// platform (the fast path), else `ws` on node:http (every Node.js). OTP_TRANSPORT (config
// otp.transport) forces one. The package's own entry is not used to load uWS: where it has no
// native build it prints a warning and falls back to a JavaScript imitation that this service does
// not work with; the binding is loaded directly instead, so a miss is known and said.
import { createRequire } from 'node:module';
import path from 'node:path';
import { type GatewayDeps, OtpGateway } from './gateway.js';
import type { OtpTransport, UwsModule } from './port.js';
import { UwsTransport } from './uws.js';
import { WsTransport } from './ws.js';

export type { OtpTransport, TransportName } from './port.js';
export type TransportChoice = 'auto' | 'uws' | 'ws';

export interface SelectedTransport {
  transport: OtpTransport;
  /** Why this one: for the start-up log. */
  reason: string;
}

const require = createRequire(import.meta.url);
let native: { module?: UwsModule; miss?: string } | undefined;

/** The uWebSockets.js binding for this process, or why there is none (tried once per process). */
export function loadUws(): { module?: UwsModule; miss?: string } {
  if (native) return native;
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    const dir = path.dirname(require.resolve('uWebSockets.js/package.json'));
    native = { module: require(path.join(dir, 'binaries', file)) as UwsModule };
  } catch (err) {
    const cause =
      (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND'
        ? `it ships no ${file}`
        : (err as Error).message.split('\n')[0];
    native = {
      miss: `uWebSockets.js has no native binding for Node.js ${process.version} on ${process.platform}-${process.arch} (${cause})`,
    };
  }
  return native;
}

export function createOtpTransport(choice: TransportChoice, deps: GatewayDeps): SelectedTransport {
  const gateway = new OtpGateway(deps);
  if (choice === 'ws') return { transport: new WsTransport(gateway, deps.log), reason: 'OTP_TRANSPORT=ws' };
  const uws = loadUws();
  if (uws.module)
    return {
      transport: new UwsTransport(uws.module, gateway),
      reason: choice === 'uws' ? 'OTP_TRANSPORT=uws' : 'its native binding loaded',
    };
  if (choice === 'uws') throw new Error(`OTP_TRANSPORT=uws, but ${uws.miss}; use OTP_TRANSPORT=ws or auto`);
  return { transport: new WsTransport(gateway, deps.log), reason: uws.miss! };
}
