// The run's connection gate: a SOCKS5 proxy on loopback, one per run, that the run's browser context
// is given as its proxy (Playwright's per-context `proxy`; Playwright also drops Chromium's implicit
// loopback bypass, `<-loopback>`). Chromium then opens no connection of that context itself: it asks
// the gate for each one, naming host and port, and the gate connects only to the host:port pairs of
// the run's allowedOrigins. That is every connection of the context, whoever asked for it: each hop of
// a redirect (which context.route() never sees), popups before Playwright knows them, workers, service
// workers, prefetch and prerender, reports, WebSockets, WebRTC's TCP, bare preconnects. Why a proxy and
// not request interception: docs/runner.md "allowedOrigins" and docs/decisions.md.
//
// SOCKS5 (RFC 1928), not an HTTP proxy: Chromium sends every scheme through it as a plain CONNECT to
// host:port (it resolves no name itself: a host name is passed on as written), so the gate only
// checks and pipes bytes; it never parses or rewrites HTTP, and TLS stays end to end.
import net from 'node:net';

export interface Gate {
  /** The proxy address for Playwright: `socks5://127.0.0.1:PORT`. */
  readonly server: string;
  /** Why the last connection to host:port failed (refused by the list, or the target did not answer). */
  failure(host: string, port: number): string | undefined;
  /** Stops listening and cuts every connection still open. */
  close(): Promise<void>;
}

export interface GateRules {
  /** host is canonical (see canonicalHost); port a number. */
  allows(host: string, port: number): boolean;
  /** A connection the list does not allow was refused. */
  refused?(host: string, port: number): void;
}

const VERSION = 5;
const NO_AUTH = 0;
const NO_METHOD = 0xff;
const CONNECT = 1;
/** Reply codes (RFC 1928 section 6). */
const REPLY = { ok: 0, general: 1, notAllowed: 2, hostUnreachable: 4, refused: 5, command: 7, addressType: 8 } as const;

/** A host as the WHATWG URL parser writes it (lower case, punycode, IPv6 in brackets), as the list holds it. */
export function canonicalHost(host: string): string | undefined {
  try {
    return new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`).hostname;
  } catch {
    return undefined;
  }
}

function reply(code: number): Buffer {
  // Bound address 0.0.0.0:0: Chromium does not use it.
  return Buffer.from([VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/** The SOCKS5 greeting at the head of `buf`: the bytes after it, or why there is none (yet). */
function readGreeting(buf: Buffer): { rest: Buffer } | 'short' | 'not-socks' | 'no-method' {
  if (buf[0] !== VERSION) return 'not-socks';
  if (buf.length < 2 || buf.length < 2 + buf[1]!) return 'short';
  const methods = buf.subarray(2, 2 + buf[1]!);
  if (!methods.includes(NO_AUTH)) return 'no-method';
  return { rest: buf.subarray(2 + buf[1]!) };
}

/** The destination of a CONNECT request at the start of buf, or 'short' while more bytes are needed. */
function destination(buf: Buffer): { command: number; host?: string; port: number; length: number } | 'short' | 'bad' {
  if (buf.length < 5) return 'short';
  if (buf[0] !== VERSION) return 'bad';
  const command = buf[1]!;
  let host: string | undefined;
  let at: number;
  switch (buf[3]) {
    case 1: // IPv4
      if (buf.length < 10) return 'short';
      host = [...buf.subarray(4, 8)].join('.');
      at = 8;
      break;
    case 3: {
      // a name, as Chromium sends every host (IP literals included)
      const n = buf[4]!;
      if (buf.length < 5 + n + 2) return 'short';
      host = buf.subarray(5, 5 + n).toString('latin1');
      at = 5 + n;
      break;
    }
    case 4: // IPv6
      if (buf.length < 22) return 'short';
      host = Array.from({ length: 8 }, (_, i) => buf.readUInt16BE(4 + i * 2).toString(16)).join(':');
      at = 20;
      break;
    default:
      return 'bad';
  }
  return {
    command,
    host: host === undefined ? undefined : canonicalHost(host),
    port: buf.readUInt16BE(at),
    length: at + 2,
  };
}

export async function openGate(rules: GateRules): Promise<Gate> {
  const sockets = new Set<net.Socket>();
  const failures = new Map<string, string>();
  const fail = (key: string, why: string) => {
    if (failures.size >= 1000) failures.clear(); // a page trying every port must not grow it without end
    failures.set(key, why);
  };
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // the peer's side of a cut connection; 'close' follows
  };

  /** The CONNECT request read: refused with its reply, or connected upstream. */
  const answer = (client: net.Socket, dest: Exclude<ReturnType<typeof destination>, 'short'>, buf: Buffer) => {
    if (dest === 'bad') return void client.end(reply(REPLY.addressType));
    if (dest.command !== CONNECT) return void client.end(reply(REPLY.command));
    const { host, port } = dest;
    const key = `${host}:${port}`;
    if (!host || !rules.allows(host, port)) {
      fail(key, 'not in allowedOrigins');
      rules.refused?.(host ?? '?', port);
      return void client.end(reply(REPLY.notAllowed));
    }
    connect(client, host, port, buf.subarray(dest.length), (why) => fail(key, why));
  };

  /** Answers the greeting at the head of `buf`: the bytes after it, or nothing while it is short or refused. */
  const greet = (client: net.Socket, buf: Buffer): Buffer | undefined => {
    const greeting = readGreeting(buf);
    if (greeting === 'short') return undefined;
    if (greeting === 'not-socks') return void client.destroy(); // nothing to answer
    if (greeting === 'no-method') return void client.end(Buffer.from([VERSION, NO_METHOD]));
    client.write(Buffer.from([VERSION, NO_AUTH]));
    return greeting.rest;
  };

  const handle = (client: net.Socket) => {
    track(client);
    client.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let greeted = false;
    const onData = (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      if (!greeted) {
        const rest = greet(client, buf);
        if (!rest) return;
        buf = rest;
        greeted = true;
        if (!buf.length) return;
      }
      const dest = destination(buf);
      if (dest === 'short') return;
      client.off('data', onData);
      answer(client, dest, buf);
    };
    client.on('data', onData);
  };

  const connect = (client: net.Socket, host: string, port: number, early: Buffer, failed: (why: string) => void) => {
    const upstream = net.connect({ host: host.startsWith('[') ? host.slice(1, -1) : host, port });
    track(upstream);
    upstream.setNoDelay(true);
    let connected = false;
    upstream.once('connect', () => {
      if (client.destroyed) return void upstream.destroy();
      connected = true;
      client.write(reply(REPLY.ok));
      if (early.length) upstream.write(early);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      // Once the tunnel is up, an error of the origin (a reset keep-alive connection) ends the client
      // as a reset would (the close below): a SOCKS reply there would be read as the origin's bytes,
      // and the browser would take a broken answer instead of retrying on a new connection.
      if (connected || client.destroyed || client.writableEnded) return;
      failed(err.code ?? err.message);
      const code =
        err.code === 'ECONNREFUSED'
          ? REPLY.refused
          : err.code === 'ENOTFOUND' || err.code === 'EHOSTUNREACH'
            ? REPLY.hostUnreachable
            : REPLY.general;
      client.end(reply(code));
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };

  const server = net.createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    server: `socks5://127.0.0.1:${port}`,
    failure: (host, p) => failures.get(`${canonicalHost(host) ?? host}:${p}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
