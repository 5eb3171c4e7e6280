// A real HTTP receiver on loopback for webhook tests: it records every request (headers, raw body),
// answers what the test tells it to, verifies Standard Webhooks signatures with the standardwebhooks
// package, and resolves waiters as requests arrive (tests wait on arrivals, never on time).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  /** webhook-id */
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  payload: any;
  /** How many requests with this webhook-id came before this one, plus one. */
  nth: number;
  /** The status answered. */
  status: number;
}

/** Verifies a request with one secret (whsec_ form, or any other string as raw key bytes), as a receiver would. */
export function verifies(r: Received, secret: string): boolean {
  const hook = secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  try {
    hook.verify(r.body, r.headers);
    return true;
  } catch {
    return false;
  }
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** The status for a request (default 200); may wait (a slow receiver). */
  answer: (r: Received) => number | Promise<number> = () => 200;
  /** Requests with the same webhook-id in flight at once, at most (must stay 1). */
  maxConcurrentPerId = 0;
  private readonly inFlight = new Map<string, number>();
  private waiters: Array<{ check: () => boolean; resolve: () => void }> = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const id = headers['webhook-id'];
    const running = (this.inFlight.get(id) ?? 0) + 1;
    this.inFlight.set(id, running);
    this.maxConcurrentPerId = Math.max(this.maxConcurrentPerId, running);
    const r: Received = {
      id,
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      headers,
      body,
      payload: JSON.parse(body),
      nth: this.received.filter((x) => x.id === id).length + 1,
      status: 0,
    };
    r.status = await this.answer(r);
    this.inFlight.set(id, (this.inFlight.get(id) ?? 1) - 1);
    this.received.push(r);
    res.writeHead(r.status, { 'content-type': 'text/plain' }).end(r.status < 300 ? 'ok' : 'not now');
    this.waiters = this.waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves once `check` holds over what was received (checked now and at every arrival). */
  waitFor(what: string, check: (received: Received[]) => boolean, timeoutMs = 10_000): Promise<void> {
    if (check(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(
          new Error(
            `receiver: no ${what} within ${timeoutMs} ms; got ${this.received.map((r) => `${r.payload.type}/${r.status}`).join(', ')}`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        check: () => check(this.received),
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** The first request whose payload matches, once it has arrived. */
  async one(what: string, match: (r: Received) => boolean, timeoutMs?: number): Promise<Received> {
    await this.waitFor(what, (all) => all.some(match), timeoutMs);
    return this.received.find(match)!;
  }

  /** Successful requests (2xx answered), by webhook-id. */
  delivered(): Map<string, Received[]> {
    const out = new Map<string, Received[]>();
    for (const r of this.received) if (r.status < 300) out.set(r.id, [...(out.get(r.id) ?? []), r]);
    return out;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
