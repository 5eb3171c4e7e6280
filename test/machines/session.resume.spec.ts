// The session machine's resume window: a dropped socket detaches the session, a new connection
// resumes it, or the window ends it (SimulatedClock).
import { expect } from 'chai';
import { CloseCode, type HelloPayload, type SessionInput } from '../../machines/types.js';
import { flush, type SessionHarness, startSession, tracked } from './harness.js';

const input: SessionInput = {
  keepaliveMs: 30_000,
  pongTimeoutMs: 10_000,
  helloTimeoutMs: 5_000,
  maxInvalidFrames: 3,
  resumeWindowMs: 20_000,
};
const hello: HelloPayload = { executor: 'runner', capabilities: { maxParallel: 1 } };

async function startReady(overrides: Partial<SessionInput> = {}): Promise<SessionHarness> {
  const h = startSession({ ...input, ...overrides });
  h.actor.send({ type: 'HELLO', hello, ref: 'msg_hello' });
  await flush();
  expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
  h.calls.length = 0;
  return h;
}

describe('session machine: resume', () => {
  const track = tracked<SessionHarness>();

  it('a dropped socket detaches the session: no ping while detached, RESUME welcomes (resumed) and reattaches', async () => {
    const h = track(await startReady());
    h.clock.increment(10_000);
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'socket closed (1006)' });
    expect(h.actor.getSnapshot().value).to.equal('detached');
    expect(h.calls).to.deep.equal([{ type: 'detach', params: { code: 1006, reason: 'socket closed (1006)' } }]);
    h.clock.increment(19_999);
    expect(h.calls).to.have.length(1);
    h.actor.send({ type: 'RESUME', ref: 'msg_again' });
    expect(h.calls.slice(1)).to.deep.equal([
      { type: 'sendWelcome', params: { ref: 'msg_again', resumed: true } },
      { type: 'reattach', params: {} },
    ]);
    expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
    // The window no longer runs; keepalive starts over from the resume.
    h.clock.increment(29_999);
    expect(h.calls).to.have.length(3);
    h.clock.increment(1);
    expect(h.calls.at(-1)).to.deep.equal({ type: 'sendPing' });
    expect(h.actor.getSnapshot().status).to.equal('active');
  });

  it('ends the session at exactly resumeWindowMs without a RESUME, with the drop as its close', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'gone' });
    h.clock.increment(19_999);
    expect(h.actor.getSnapshot().value).to.equal('detached');
    h.clock.increment(1);
    const snapshot = h.actor.getSnapshot();
    expect(snapshot.status).to.equal('done');
    expect(snapshot.output).to.deep.equal({ code: 1006, reason: 'gone; not resumed within 20000 ms' });
    expect(h.calls.map((c) => c.type)).to.deep.equal(['detach']);
  });

  it('a deliberate close by the executor (1000, 1005) ends the session at once', async () => {
    for (const code of [CloseCode.normal, 1005]) {
      const h = await startReady();
      h.actor.send({ type: 'SOCKET_CLOSED', code, reason: 'bye' });
      expect(h.actor.getSnapshot().output).to.deep.equal({ code, reason: 'bye' });
      expect(h.calls).to.deep.equal([]);
      h.actor.stop();
    }
  });

  it('without a resume window a drop ends the session as before', async () => {
    const h = track(await startReady({ resumeWindowMs: 0 }));
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'gone' });
    expect(h.actor.getSnapshot().output).to.deep.equal({ code: 1006, reason: 'gone' });
  });

  it('a RESUME while still attached (a half-open socket) detaches first, then welcomes and reattaches', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'RESUME', ref: 'msg_r' });
    expect(h.calls).to.deep.equal([
      { type: 'detach', params: { code: CloseCode.sessionTakenOver, reason: 'session resumed on another connection' } },
      { type: 'sendWelcome', params: { ref: 'msg_r', resumed: true } },
      { type: 'reattach', params: {} },
    ]);
    expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
  });

  it('CLOSE while detached ends the session without closeSocket (there is no socket)', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'gone' });
    h.actor.send({ type: 'CLOSE', code: CloseCode.unauthorized, reason: 'API key revoked' });
    expect(h.calls.map((c) => c.type)).to.deep.equal(['detach']);
    expect(h.actor.getSnapshot().output).to.deep.equal({ code: 4401, reason: 'API key revoked' });
  });

  it('RECONNECT_ELSEWHERE (the service drains) closes the socket with its code, then waits detached', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'RECONNECT_ELSEWHERE', code: CloseCode.reconnect, reason: 'draining' });
    expect(h.calls).to.deep.equal([
      { type: 'closeSocket', params: { code: 4503, reason: 'draining' } },
      { type: 'detach', params: { code: 4503, reason: 'draining' } },
    ]);
    expect(h.actor.getSnapshot().value).to.equal('detached');
    // The socket's own close, arriving after, changes nothing.
    h.actor.send({ type: 'SOCKET_CLOSED', code: 4503, reason: 'draining' });
    expect(h.actor.getSnapshot().value).to.equal('detached');
    h.clock.increment(20_000);
    expect(h.actor.getSnapshot().output).to.deep.equal({ code: 4503, reason: 'draining; not resumed within 20000 ms' });
  });

  it('a hello resuming a session held elsewhere waits past the hello timeout; TRANSFERRED_IN welcomes it as resumed, without registering', () => {
    const h = track(startSession({ ...input, resumeAnswerMs: 40_000 }));
    h.actor.send({ type: 'RESUME_ASKED' });
    expect(h.actor.getSnapshot().value).to.equal('resuming');
    // A draining holder answers in turn: the hello timeout (10 s) no longer runs.
    h.clock.increment(30_000);
    expect(h.actor.getSnapshot().value).to.equal('resuming');
    h.actor.send({ type: 'TRANSFERRED_IN', ref: 'msg_a' });
    expect(h.calls).to.deep.equal([
      { type: 'sendWelcome', params: { ref: 'msg_a', resumed: true } },
      { type: 'reattach', params: {} },
    ]);
    expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
  });

  it('a refused resume waits for a plain hello again, with its own hello timeout; an unanswered one closes 4408', () => {
    const refused = track(startSession({ ...input, resumeAnswerMs: 40_000 }));
    refused.actor.send({ type: 'RESUME_ASKED' });
    refused.clock.increment(20_000);
    refused.actor.send({ type: 'RESUME_REFUSED' });
    expect(refused.actor.getSnapshot().value).to.equal('awaitingHello');
    refused.actor.send({ type: 'HELLO', hello, ref: 'msg_b' });
    expect(refused.actor.getSnapshot().value).to.equal('registering');

    const unanswered = track(startSession({ ...input, resumeAnswerMs: 40_000 }));
    unanswered.actor.send({ type: 'RESUME_ASKED' });
    unanswered.clock.increment(40_000);
    const snapshot = unanswered.actor.getSnapshot();
    expect(snapshot.status).to.equal('done');
    expect(snapshot.output).to.deep.include({ code: 4408, reason: 'resume not answered' });
  });

  it('TRANSFER_OUT holds everything (detach, no ping) while the rows move; TRANSFERRED_OUT ends it with 4409 on its socket', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'TRANSFER_OUT' });
    expect(h.actor.getSnapshot().value).to.equal('transferring');
    expect(h.calls).to.deep.equal([
      { type: 'detach', params: { code: 4409, reason: 'handing the session over to another process' } },
    ]);
    // No keepalive while it moves: neither a ping nor a pong time-out.
    h.clock.increment(60_000);
    expect(h.calls).to.have.length(1);
    h.actor.send({ type: 'TRANSFERRED_OUT' });
    const snapshot = h.actor.getSnapshot();
    expect(snapshot.status).to.equal('done');
    expect(snapshot.output).to.deep.equal({
      code: 4409,
      reason: 'session resumed on another service process',
      transferred: true,
    });
    expect(h.calls.slice(1)).to.deep.equal([
      {
        type: 'closeSocket',
        params: { code: 4409, reason: 'session resumed on another service process', transferred: true },
      },
    ]);
  });

  it('TRANSFER_CANCELLED: the session goes on where it was (reattach), keepalive again', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'TRANSFER_OUT' });
    h.actor.send({ type: 'TRANSFER_CANCELLED' });
    expect(h.calls.map((c) => c.type)).to.deep.equal(['detach', 'reattach']);
    expect(h.actor.getSnapshot().value).to.deep.equal({ ready: 'alive' });
    h.clock.increment(30_000);
    expect(h.calls.at(-1)).to.deep.equal({ type: 'sendPing' });
  });

  it('a session whose socket dropped while it moves waits detached; TRANSFERRED_OUT then ends it without a socket to close', async () => {
    const h = track(await startReady());
    h.actor.send({ type: 'TRANSFER_OUT' });
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'gone' });
    expect(h.actor.getSnapshot().value).to.equal('detached');
    // The transfer going on, a cancel leaves it detached (it waits for its executor).
    h.actor.send({ type: 'TRANSFER_CANCELLED' });
    expect(h.actor.getSnapshot().value).to.equal('detached');
    h.actor.send({ type: 'TRANSFERRED_OUT' });
    expect(h.actor.getSnapshot().output).to.include({ code: 4409, transferred: true });
    expect(h.calls.map((c) => c.type)).to.deep.equal(['detach']);
  });

  it('a drop before the welcome is never resumable', async () => {
    const h = track(startSession(input));
    h.actor.send({ type: 'SOCKET_CLOSED', code: 1006, reason: 'gone' });
    expect(h.actor.getSnapshot().output).to.deep.equal({ code: 1006, reason: 'gone' });
  });
});
