// The session machine: handshake, keepalive, invalid frames and closing.
import { expect } from 'chai';
import { CloseCode, type HelloPayload, type SessionInput } from '../../machines/types.js';
import { flush, type SessionHarness, type SessionWrites, startSession, tracked } from './harness.js';

const input: SessionInput = {
  keepaliveMs: 30_000,
  pongTimeoutMs: 10_000,
  helloTimeoutMs: 5_000,
  maxInvalidFrames: 3,
};

const hello: HelloPayload = {
  executor: 'runner',
  name: 'ci-runner',
  version: '1.2.0',
  capabilities: { screenshot: true, eval: false, maxParallel: 2 },
  projectId: 'prj_1',
};

const start = (writes: SessionWrites = {}) => startSession(input, writes);

async function startReady(): Promise<SessionHarness> {
  const h = start();
  h.actor.send({ type: 'HELLO', hello, ref: 'msg_hello' });
  await flush();
  expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
  h.calls.length = 0;
  return h;
}

function expectClosed(h: SessionHarness, code: number, reason: string) {
  const snapshot = h.actor.getSnapshot();
  expect(snapshot.status).to.equal('done');
  expect(snapshot.value).to.equal('closed');
  expect(snapshot.output).to.deep.equal({ code, reason });
}

describe('session machine', () => {
  const track = tracked<SessionHarness>();

  describe('handshake', () => {
    it('stores the session, then welcomes with the hello frame id as ref', async () => {
      const h = track(start());
      expect(h.actor.getSnapshot().value).to.equal('awaitingHello');
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      expect(h.actor.getSnapshot().value).to.equal('registering');
      await flush();
      expect(h.calls).to.deep.equal([
        { type: 'registerSession', params: { hello } },
        { type: 'sendWelcome', params: { ref: 'msg_1' } },
      ]);
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
    });

    it('does not welcome before registerSession has resolved', async () => {
      let release!: () => void;
      const stored = new Promise<void>((resolve) => (release = resolve));
      const h = track(start({ register: () => stored }));
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      await flush();
      expect(h.calls.map((call) => call.type)).to.deep.equal(['registerSession']);
      expect(h.actor.getSnapshot().value).to.equal('registering');
      release();
      await flush();
      expect(h.calls.map((call) => call.type)).to.deep.equal(['registerSession', 'sendWelcome']);
    });

    it("closes with 1011 and a reason of its own (never the write's message) when registerSession rejects", async () => {
      const h = track(start({ register: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432')) }));
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      await flush();
      expect(h.calls).to.deep.equal([
        { type: 'registerSession', params: { hello } },
        { type: 'closeSocket', params: { code: 1011, reason: 'the session could not be stored' } },
      ]);
      expect(CloseCode.internalError).to.equal(1011);
      expectClosed(h, 1011, 'the session could not be stored');
    });

    it('closes with 1013 (try again later) when the session could not be stored for a database outage', async () => {
      const h = track(start());
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      h.actor.send({ type: 'SESSION_NOT_REGISTERED', message: 'database unavailable', retryable: true });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'closeSocket',
        params: { code: 1013, reason: 'database unavailable: connect again later' },
      });
      expectClosed(h, 1013, 'database unavailable: connect again later');
    });

    it('closes with 4408 "no hello" at exactly helloTimeoutMs', () => {
      const h = track(start());
      h.clock.increment(4_999);
      expect(h.actor.getSnapshot().value).to.equal('awaitingHello');
      expect(h.calls).to.deep.equal([]);
      h.clock.increment(1);
      expect(h.calls).to.deep.equal([{ type: 'closeSocket', params: { code: 4408, reason: 'no hello' } }]);
      expectClosed(h, CloseCode.timeout, 'no hello');
    });

    it('stops the hello timer once HELLO arrives', async () => {
      const h = track(start());
      h.clock.increment(4_000);
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      await flush();
      h.clock.increment(2_000);
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
      expect(h.calls.map((call) => call.type)).to.deep.equal(['registerSession', 'sendWelcome']);
    });

    it('sends no ping before the session is ready', () => {
      const h = track(start());
      h.clock.increment(4_999);
      expect(h.calls).to.deep.equal([]);
    });
  });

  describe('keepalive', () => {
    it('pings every keepaliveMs and returns to alive on PONG', async () => {
      const h = track(await startReady());
      h.clock.increment(29_999);
      expect(h.calls).to.deep.equal([]);
      h.clock.increment(1);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'awaitingPong' });

      h.clock.increment(3_000);
      h.actor.send({ type: 'PONG' });
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });

      // The next ping is keepaliveMs after the pong, and the pong time-out no longer runs.
      h.clock.increment(29_999);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
      expect(h.actor.getSnapshot().status).to.equal('active');
      h.clock.increment(1);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }, { type: 'sendPing' }]);
      h.actor.send({ type: 'PONG' });
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
    });

    it('closes with 4408 "keepalive timeout" at exactly pongTimeoutMs after a missed pong', async () => {
      const h = track(await startReady());
      h.clock.increment(30_000);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
      h.clock.increment(9_999);
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'awaitingPong' });
      h.clock.increment(1);
      expect(h.calls).to.deep.equal([
        { type: 'sendPing' },
        { type: 'closeSocket', params: { code: 4408, reason: 'keepalive timeout' } },
      ]);
      expectClosed(h, 4408, 'keepalive timeout');
    });

    it('a PONG while alive changes nothing', async () => {
      const h = track(await startReady());
      h.clock.increment(10_000);
      h.actor.send({ type: 'PONG' });
      h.clock.increment(20_000);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
    });
  });

  describe('invalid frames', () => {
    it('closes with 4400 on the third invalid frame in a row', async () => {
      const h = track(await startReady());
      h.actor.send({ type: 'FRAME_INVALID', message: 'not JSON' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'not JSON' });
      expect(h.actor.getSnapshot().status).to.equal('active');
      expect(h.actor.getSnapshot().context.strikes).to.equal(2);
      expect(h.calls).to.deep.equal([]);
      h.actor.send({ type: 'FRAME_INVALID', message: 'not JSON' });
      expect(h.calls).to.deep.equal([
        { type: 'closeSocket', params: { code: 4400, reason: '3 invalid frames in a row' } },
      ]);
      expectClosed(h, CloseCode.protocolViolation, '3 invalid frames in a row');
    });

    it('a valid frame in between resets the count', async () => {
      const h = track(await startReady());
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_VALID' });
      expect(h.actor.getSnapshot().context.strikes).to.equal(0);
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
      expect(h.calls).to.deep.equal([]);
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      expectClosed(h, 4400, '3 invalid frames in a row');
    });

    it('a PONG resets the count too', async () => {
      const h = track(await startReady());
      h.clock.increment(30_000);
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'PONG' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      expect(h.actor.getSnapshot().status).to.equal('active');
      expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
    });

    it('counts before the hello too, and HELLO resets the count', async () => {
      const h = track(start());
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'HELLO', hello, ref: 'msg_1' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      expect(h.actor.getSnapshot().status).to.equal('active');
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      expectClosed(h, 4400, '3 invalid frames in a row');
      // Closed while registering: the registration's later resolution sends no welcome.
      await flush();
      expect(h.calls.map((call) => call.type)).to.deep.equal(['registerSession', 'closeSocket']);
    });
  });

  describe('closing', () => {
    it('CLOSE closes the socket with the given code and reason', async () => {
      const h = track(await startReady());
      h.actor.send({ type: 'CLOSE', code: CloseCode.unauthorized, reason: 'key revoked' });
      expect(h.calls).to.deep.equal([{ type: 'closeSocket', params: { code: 4401, reason: 'key revoked' } }]);
      expectClosed(h, 4401, 'key revoked');
    });

    it('CLOSE works before the hello', () => {
      const h = track(start());
      h.actor.send({ type: 'CLOSE', code: CloseCode.goingAway, reason: 'shutting down' });
      expect(h.calls).to.deep.equal([{ type: 'closeSocket', params: { code: 1001, reason: 'shutting down' } }]);
      expectClosed(h, 1001, 'shutting down');
    });

    it('SOCKET_CLOSED ends the session without closeSocket, with the peer’s code and reason', async () => {
      const h = track(await startReady());
      h.clock.increment(30_000); // awaiting a pong
      h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: '' });
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
      expectClosed(h, 1006, '');
      // No timer survives the close.
      h.clock.increment(60_000);
      expect(h.calls).to.deep.equal([{ type: 'sendPing' }]);
    });

    it('nothing happens after closed', async () => {
      const h = track(await startReady());
      h.actor.send({ type: 'CLOSE', code: 1000, reason: 'bye' });
      h.actor.send({ type: 'CLOSE', code: 4401, reason: 'again' });
      h.actor.send({ type: 'FRAME_INVALID', message: 'x' });
      h.clock.increment(120_000);
      expect(h.calls).to.deep.equal([{ type: 'closeSocket', params: { code: 1000, reason: 'bye' } }]);
      expectClosed(h, 1000, 'bye');
    });
  });
});
