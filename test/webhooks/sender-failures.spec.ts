// A delivery that cannot connect says so in words and a code, never with the address Node puts in
// its message (the attempt log is shown to the project through REST).
import { expect } from 'chai';
import { freePort } from '../../src/free-port.js';
import { send } from '../../src/webhook-delivery/sender.js';

describe('Webhook sender: failures in the attempt log', () => {
  it('tells a refused connection without the address or the port', async () => {
    const port = await freePort();
    const outcome = await send({
      url: `http://127.0.0.1:${port}/hook`,
      msgId: 'msg_1',
      body: '{}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      timeoutMs: 2_000,
      allowPrivate: true,
    });
    expect(outcome.ok).to.equal(false);
    expect(outcome.error).to.equal('the receiver refused the connection (ECONNREFUSED)');
    expect(outcome.error).not.to.include(String(port));
  });

  it('tells a host name that does not resolve without echoing it from the resolver', async () => {
    const outcome = await send({
      url: 'http://no-such-host.invalid/hook',
      msgId: 'msg_2',
      body: '{}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      timeoutMs: 2_000,
      allowPrivate: true,
    });
    expect(outcome.ok).to.equal(false);
    expect(outcome.error).to.match(/^the host name (was not found|could not be resolved)/);
  });
});
