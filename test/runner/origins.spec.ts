// allowedOrigins: the origin rule, the run's gate (a SOCKS5 proxy that connects only to the list), an
// application's own WebSocket, and a representative few of the hostile page's ways out, each shown to
// reach the other origin when allowed and then to reach nothing (test/slow/hostile.spec.ts runs them
// all). Real service, real runner, real Chromium.

import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { expect } from 'chai';
import { openGate } from '../../src/runner/gate.js';
import { OriginGuard, originOf } from '../../src/runner/origins.js';
import { type RunnerHarness, startHarness, step } from './harness.js';
import { type Counter, type Site, startCounter, startSite, WAYS } from './hostile.js';
import { runAllowed, runForbidden } from './hostile-run.js';

/** One of each family: navigation redirects, a chain, sub-resource redirects, popups, workers, WebRTC. */
const FEW = [
  'navigate-302',
  'navigate-chain',
  'form-post-307',
  'link',
  'img-redirect',
  'fetch-307',
  'window-open',
  'popup-redirect',
  'worker-websocket',
  'shared-worker',
  'webrtc',
];

describe('otp-runner: allowedOrigins', function () {
  this.timeout(60_000);

  describe('the origin rule', () => {
    it('judges ws as http and wss as https on the same host and port, with default ports filled in', () => {
      const guard = new OriginGuard([
        'https://app.test',
        'http://127.0.0.1:8080/some/path',
        'not a url',
        'ftp://files.test',
      ]);
      expect(guard.allows('wss://app.test/socket')).to.equal(true);
      expect(guard.allows('https://app.test:443/x')).to.equal(true);
      expect(guard.allows('ws://127.0.0.1:8080/live')).to.equal(true);
      expect(guard.allows('http://127.0.0.1:8080/')).to.equal(true);
      // another scheme, port or host is another origin
      expect(guard.allows('ws://app.test/socket')).to.equal(false);
      expect(guard.allows('http://app.test/')).to.equal(false);
      expect(guard.allows('https://app.test:8443/')).to.equal(false);
      expect(guard.allows('https://api.app.test/')).to.equal(false);
      expect(guard.allows('wss://127.0.0.1:8080/')).to.equal(false);
      expect(guard.allows('ftp://files.test/')).to.equal(false);
      expect(guard.allows('file:///etc/passwd')).to.equal(false);
      // nothing from the network
      for (const url of ['about:blank', 'data:text/html,x', 'blob:https://app.test/1', 'javascript:void 0'])
        expect(guard.allows(url), url).to.equal(true);
      expect(originOf('WSS://App.Test:443/x')).to.deep.equal({
        origin: 'https://app.test:443',
        host: 'app.test',
        port: 443,
      });
    });

    it('lets the gate connect only to the host:port pairs of the list, whatever the spelling of the host', () => {
      const guard = new OriginGuard(['https://App.Test', 'http://[::1]:3000', 'ws://127.0.0.1:9000']);
      expect(guard.allowsHost('app.test', 443)).to.equal(true);
      expect(guard.allowsHost('APP.TEST', 443)).to.equal(true);
      expect(guard.allowsHost('::1', 3000)).to.equal(true);
      expect(guard.allowsHost('[::1]', 3000)).to.equal(true);
      expect(guard.allowsHost('127.0.0.1', 9000)).to.equal(true);
      expect(guard.allowsHost('app.test', 80)).to.equal(false);
      expect(guard.allowsHost('localhost', 9000)).to.equal(false);
      expect(guard.allowsHost('0:0:0:0:0:0:0:1', 3001)).to.equal(false);
    });
  });

  describe('the gate', () => {
    let target: net.Server;
    let port: number;
    let connections = 0;
    before(async () => {
      target = net.createServer((socket) => {
        connections++;
        socket.pipe(socket);
      });
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      port = (target.address() as AddressInfo).port;
    });
    after(() => target.close());

    /** A SOCKS5 client: greeting, then CONNECT to host:port by name; answers the reply code and the socket. */
    async function connectThrough(
      proxy: string,
      host: string,
      to: number,
    ): Promise<{ code: number; socket: net.Socket }> {
      const socket = net.connect(Number(proxy.split(':').at(-1)), '127.0.0.1');
      const chunks: Buffer[] = [];
      const read = (n: number) =>
        new Promise<Buffer>((resolve) => {
          const take = () => {
            const all = Buffer.concat(chunks);
            if (all.length < n) {
              socket.once('data', (d) => {
                chunks.push(d);
                take();
              });
              return;
            }
            chunks.splice(0, chunks.length, all.subarray(n));
            resolve(all.subarray(0, n));
          };
          take();
        });
      socket.write(Buffer.from([5, 1, 0]));
      expect([...(await read(2))]).to.deep.equal([5, 0]);
      const name = Buffer.from(host);
      const portBytes = Buffer.alloc(2);
      portBytes.writeUInt16BE(to);
      socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]));
      const reply = await read(10);
      return { code: reply[1]!, socket };
    }

    it('pipes an allowed connection and refuses any other before connecting (reply 2), then carries on', async () => {
      const refused: string[] = [];
      const gate = await openGate({
        allows: (host, p) => host === '127.0.0.1' && p === port,
        refused: (host, p) => refused.push(`${host}:${p}`),
      });
      try {
        const before = connections;
        const ok = await connectThrough(gate.server, '127.0.0.1', port);
        expect(ok.code).to.equal(0);
        ok.socket.write('ping');
        expect((await new Promise<Buffer>((resolve) => ok.socket.once('data', resolve))).toString()).to.equal('ping');
        ok.socket.destroy();
        // The same port under another name is another host: refused, and nothing was connected.
        const no = await connectThrough(gate.server, 'localhost', port);
        expect(no.code).to.equal(2);
        await new Promise((resolve) => no.socket.once('close', resolve));
        expect(connections - before).to.equal(1);
        expect(refused).to.deep.equal([`localhost:${port}`]);
        expect(gate.failure('localhost', port)).to.equal('not in allowedOrigins');
        // A target that is down is said so (reply 5), and remembered for the step's message.
        const closed = net.createServer();
        await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
        const downPort = (closed.address() as AddressInfo).port;
        await new Promise((resolve) => closed.close(resolve));
        const gate2 = await openGate({ allows: () => true });
        const down = await connectThrough(gate2.server, '127.0.0.1', downPort);
        expect(down.code).to.equal(5);
        expect(gate2.failure('127.0.0.1', downPort)).to.equal('ECONNREFUSED');
        await gate2.close();
      } finally {
        await gate.close();
      }
    });

    it('ends the tunnel as the origin ended it, with no SOCKS reply in its stream, when the origin resets it', async () => {
      // An origin that answers, then resets the connection (as a server closing an idle keep-alive
      // connection the browser was about to reuse).
      const resetting = net.createServer((socket) =>
        socket.once('data', () => {
          socket.write('pong');
          setTimeout(() => socket.resetAndDestroy(), 50);
        }),
      );
      await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
      const resetPort = (resetting.address() as AddressInfo).port;
      const gate = await openGate({ allows: () => true });
      try {
        const { code, socket } = await connectThrough(gate.server, '127.0.0.1', resetPort);
        expect(code).to.equal(0);
        const got: Buffer[] = [];
        socket.on('data', (d) => got.push(d));
        socket.on('error', () => {});
        socket.write('ping');
        await new Promise((resolve) => socket.once('close', resolve));
        expect(Buffer.concat(got).toString()).to.equal('pong');
        // It connected: no failure is told for that origin.
        expect(gate.failure('127.0.0.1', resetPort)).to.equal(undefined);
      } finally {
        await gate.close();
        await new Promise((resolve) => resetting.close(resolve));
      }
    });

    it('cuts a client that does not speak SOCKS5, or only with a password', async () => {
      const gate = await openGate({ allows: () => true });
      const port = Number(gate.server.split(':').at(-1));
      try {
        const http = net.connect(port, '127.0.0.1');
        const got: Buffer[] = [];
        http.on('data', (d) => got.push(d));
        http.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        await new Promise((resolve) => http.once('close', resolve));
        expect(Buffer.concat(got).length).to.equal(0);
        const password = net.connect(port, '127.0.0.1');
        password.write(Buffer.from([5, 1, 2]));
        const answer = await new Promise<Buffer>((resolve) => password.once('data', resolve));
        expect([...answer]).to.deep.equal([5, 0xff]);
        await new Promise((resolve) => password.once('close', resolve));
      } finally {
        await gate.close();
      }
    });
  });

  describe('in real Chromium', () => {
    let h: RunnerHarness;
    let B: Counter;
    let site: Site;
    const logs: string[] = [];

    before(async () => {
      B = await startCounter();
      site = await startSite(B);
      h = await startHarness({ log: (line) => logs.push(line) });
    });
    after(async () => {
      await h?.stop();
      await site?.close();
      await B?.close();
    });

    it('lets an application talk to its own server over a WebSocket with only its http origin allowed', async () => {
      const before = site.ownSockets;
      const run = await h.run(
        [
          step({ action: 'navigate', url: `${site.origin}/own-ws` }),
          step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#ws' }, expected: 'echo from A' }),
        ],
        {
          allowedOrigins: [site.origin],
        },
      );
      expect(run.steps.map((s: any) => s.error?.message ?? s.status)).to.deep.equal(['pass', 'pass']);
      expect(site.ownSockets - before).to.equal(1);
    });

    it("shows a run's list on its console page: by default the origins of its navigate steps", async () => {
      const run = await h.run([step({ action: 'navigate', url: `${site.origin}/own-ws` })]);
      expect(run.allowedOrigins).to.deep.equal([site.origin]);
      const res = await fetch(`${h.t.service.restUrl}/console/f/runs/${run.id}`, {
        headers: { authorization: `Bearer ${h.key}` },
      });
      expect(res.status).to.equal(200);
      expect(/<dd id="allowed-origins"[^>]*>([^<]*)<\/dd>/.exec(await res.text())?.[1]).to.equal(site.origin);
    });

    const few = WAYS.filter((w) => FEW.includes(w.name));
    it(`each of ${few.length} representative ways out reaches the other origin when it is allowed`, async () => {
      expect(few.map((w) => w.name)).to.have.members(FEW);
      await runAllowed(h, few, site, B);
    });

    it('none reaches it when it is not: every connection refused, each navigation away failing its step with E_NAVIGATION_BLOCKED', async () => {
      logs.length = 0;
      await runForbidden(h, few, site, B);
      // The gate said what it refused, once per destination.
      expect(logs.filter((l) => l.includes(`connection to ${B.origin.slice(7)} refused`))).to.have.length(1);
    });

    it("names a target that does not answer in a navigate step's error", async () => {
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const origin = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise((resolve) => closed.close(resolve));
      const run = await h.run([step({ action: 'navigate', url: `${origin}/` }, { evidence: 'never' })]);
      expect(run.steps[0].error.code).to.equal('E_INTERNAL');
      expect(run.steps[0].error.message).to.include('could not connect: ECONNREFUSED');
    });
  });
});
