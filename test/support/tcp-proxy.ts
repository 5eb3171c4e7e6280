// A TCP relay on loopback in front of a real server (PostgreSQL), that a test can cut: cut() stops
// listening and drops every relayed connection at once (as a crash or a fail-over does), restore()
// listens again on the same port. The client sees real refused connects and real broken sockets.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the relay's. */
  via(url: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const relay = (client: net.Socket) => {
    const upstream = net.connect(targetPort, targetHost);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  };
  let server: net.Server | undefined;
  const listen = (port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const s = net.createServer(relay);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  server = await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const cut = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise((resolve) => s.close(resolve));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    port,
    via: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut,
    restore: async () => {
      server ??= await listen(port);
    },
    close: cut,
  };
}
