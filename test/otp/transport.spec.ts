// What each OTP transport adapter promises on its own, below the protocol: backpressure (a slow
// reader gets every frame in order; one that stops reading is cut off, never silently short of
// frames), paths other than /otp refused, and a socket library's exception kept out of the process.
// Real sockets and real adapters; the session behind the gateway is a small echo of its own, so
// the test can make the service write as much as it likes.
import type net from 'node:net';
import { expect } from 'chai';
import WebSocket from 'ws';
import type { Principal } from '../../src/auth/principal.js';
import { createLogger } from '../../src/log.js';
import type { Connection } from '../../src/otp/engine/session.js';
import type { SocketSession } from '../../src/otp/transport/gateway.js';
import { createOtpTransport, type OtpTransport } from '../../src/otp/transport/index.js';
import { describeEachTransport } from '../support/transports.js';

const KEY = 'good-key';
const principal: Principal = { keyId: 'key_1', tenantId: 'ten_1', projectId: 'prj_1', scope: 'write' };

/** A session that answers "burst N BYTES" with N frames of BYTES each, numbered, and notes its end. */
class BurstSession implements SocketSession {
  readonly id = 'ots_burst';
  readonly ended: Promise<number>;
  /** The last burst was handed to the socket. */
  readonly written: Promise<void>;
  private end!: (code: number) => void;
  private wrote!: () => void;
  constructor(private readonly conn: Connection) {
    this.ended = new Promise((resolve) => (this.end = resolve));
    this.written = new Promise((resolve) => (this.wrote = resolve));
  }
  handleText(text: string): void {
    const [, count, bytes] = text.split(' ').map(Number);
    const body = 'x'.repeat(bytes! - 12);
    for (let i = 0; i < count!; i++) this.conn.send(`${String(i).padStart(10, '0')}: ${body}`);
    this.wrote();
  }
  frameTooLarge(): void {}
  socketClosed(code: number): void {
    this.end(code);
  }
}

describeEachTransport('OTP transport adapter', (name) => {
  let transport: OtpTransport;
  let url: string;
  // The next session the gateway binds (one socket is opened at a time).
  let bound: (session: BurstSession) => void = () => {};
  const nextSession = () => new Promise<BurstSession>((resolve) => (bound = resolve));

  before(async () => {
    ({ transport } = createOtpTransport(name, {
      engine: {
        connect: (_principal, conn) => {
          const session = new BurstSession(conn);
          bound(session);
          return session;
        },
      },
      authenticate: (secret) => (secret === KEY ? principal : null),
      log: createLogger('silent'),
      maxFrameBytes: 1024 * 1024,
    }));
    url = `ws://127.0.0.1:${await transport.listen('127.0.0.1', 0)}`;
  });
  after(() => transport?.close());

  const open = async () => {
    const ws = new WebSocket(`${url}/otp`, { headers: { authorization: `Bearer ${KEY}` } });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return ws;
  };

  it(`is the ${name} adapter`, () => {
    expect(transport.name).to.equal(name);
  });

  it('gives a reader that falls behind every frame, in order, once it reads again', async () => {
    const bind = nextSession();
    const ws = await open();
    const session = await bind;
    const socket = (ws as unknown as { _socket: net.Socket })._socket;
    socket.pause();
    const frames: string[] = [];
    const all = new Promise<void>((resolve) =>
      ws.on('message', (data) => frames.push(data.toString()) === 96 && resolve()),
    );
    // 3 MiB, under the 4 MiB the service buffers for a reader (plus what the kernel holds).
    ws.send('burst 96 32768');
    await session.written;
    socket.resume();
    await all;
    expect(frames.map((f) => Number(f.slice(0, 10)))).to.deep.equal([...Array(96).keys()]);
    ws.close();
    expect(await session.ended).to.be.a('number');
  });

  it('cuts off a reader that stopped reading once 4 MiB wait for it, and keeps serving others', async () => {
    const bind = nextSession();
    const ws = await open();
    const session = await bind;
    (ws as unknown as { _socket: net.Socket })._socket.pause();
    // 64 MiB: far more than the service's 4 MiB and the kernel's buffers hold together.
    ws.send('burst 1024 65536');
    expect(await session.ended).to.be.a('number');
    ws.terminate();
    const other = await open();
    const got = new Promise<string>((resolve) => other.once('message', (data) => resolve(data.toString())));
    other.send('burst 1 100');
    expect((await got).slice(0, 10)).to.equal('0000000000');
    other.close();
  });

  it('refuses an upgrade to any other path', async () => {
    const ws = new WebSocket(`${url}/elsewhere`, { headers: { authorization: `Bearer ${KEY}` } });
    const outcome = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('open'));
      ws.once('error', () => resolve('refused'));
      ws.once('unexpected-response', () => resolve('refused'));
    });
    expect(outcome).to.equal('refused');
  });

  it('survives a broken frame from the client (invalid UTF-8 in a text frame) and serves the next', async () => {
    const ws = await open();
    const closed = new Promise<number>((resolve) => ws.once('close', resolve));
    // A text frame whose payload is not UTF-8, written by hand: FIN + text opcode, masked, 2 bytes.
    const socket = (ws as unknown as { _socket: net.Socket })._socket;
    const mask = Buffer.from([1, 2, 3, 4]);
    const payload = Buffer.from([0xc3, 0x28]).map((b, i) => b ^ mask[i % 4]!);
    socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload]));
    expect(await closed).to.be.a('number');
    const other = await open();
    other.close();
  });
});
