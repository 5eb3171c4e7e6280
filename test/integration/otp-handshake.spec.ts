import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { describeEachTransport } from '../support/transports.js';

describeEachTransport('OTP: handshake, credentials and frame handling', (transport) => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { keepaliveSec: 1, pongTimeoutMs: 400, transport } });
  });
  after(async () => t?.stop());

  it('answers hello with welcome (sessionId, serverTime, keepaliveSec, limits) and lists the session', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    const welcome = await executor.hello({ screenshot: true, maxParallel: 3 }, { projectId: 'prj_default' });
    expect(welcome.otp).to.equal('1.0');
    expect(welcome.id).to.match(/^msg_/);
    expect(welcome.sessionId).to.match(/^ots_/);
    expect(welcome.payload.sessionId).to.equal(welcome.sessionId);
    expect(Date.parse(welcome.payload.serverTime)).to.be.closeTo(Date.now(), 5000);
    expect(welcome.payload.keepaliveSec).to.equal(1);
    expect(welcome.payload.limits).to.include({
      maxFrameBytes: 1048576,
      maxSteps: 500,
      stepTimeoutMs: 30000,
      maxParallel: 3,
    });
    const sessions = await t.request('GET', '/otp/sessions');
    const listed = sessions.body.items.find((s: { id: string }) => s.id === welcome.sessionId);
    expect(listed).to.include({ executor: 'runner', name: 'test-executor', maxParallel: 3, status: 'open' });
    executor.close();
  });

  it('answers the first frame of every connection, even when it arrives before the key is checked', async function () {
    // 300 connections take about a second on a quiet machine and may take many on a busy one: the
    // test checks that no frame is lost, not how fast they come.
    this.timeout(120_000);
    // The hello goes out the moment the socket opens, while the service is still looking the key up.
    // (A regression test: an upgrade answered asynchronously lost about one first frame in a hundred.)
    for (let i = 0; i < 300; i++) {
      const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey, via: i % 2 ? 'query' : 'header' });
      const welcome = await executor.hello({}, {});
      expect(welcome.payload.sessionId, `connection ${i}`).to.match(/^ots_/);
      executor.close();
    }
  });

  it('accepts the key in ?token=', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey, via: 'query' });
    const welcome = await executor.hello();
    expect(welcome.payload.sessionId).to.match(/^ots_/);
    executor.close();
  });

  async function refused(executor: TestExecutor): Promise<{ error: any; close: { code: number; reason: string } }> {
    const error = await executor.next('error');
    const close = await executor.closed;
    return { error, close };
  }

  it('refuses a connection without credentials with E_AUTH and close 4401', async () => {
    const { error, close } = await refused(await TestExecutor.connect(t.otpUrl));
    expect(error.payload.code).to.equal('E_AUTH');
    expect(close.code).to.equal(4401);
  });

  it('refuses a wrong key with E_AUTH and close 4401', async () => {
    const { error, close } = await refused(
      await TestExecutor.connect(t.otpUrl, { key: 'svc_pk_wrong_wrong_wrong_wrong_wrong_wrong_wrong' }),
    );
    expect(error.payload.code).to.equal('E_AUTH');
    expect(close.code).to.equal(4401);
  });

  it('refuses a read-only key with E_AUTH and close 4403', async () => {
    const { error, close } = await refused(await TestExecutor.connect(t.otpUrl, { key: await t.newKey('read') }));
    expect(error.payload.code).to.equal('E_AUTH');
    expect(error.payload.message).to.contain('write');
    expect(close.code).to.equal(4403);
  });

  it('refuses a revoked key, and closes the open sockets of a key when it is revoked', async () => {
    const created = await t.request('POST', '/api-keys', { body: { scope: 'write', name: 'executor' } });
    const executor = await TestExecutor.connect(t.otpUrl, { key: created.body.key });
    await executor.hello();
    expect((await t.request('DELETE', `/api-keys/${created.body.id}`)).status).to.equal(200);
    const close = await executor.closed;
    expect(close.code).to.equal(4401);
    const again = await refused(await TestExecutor.connect(t.otpUrl, { key: created.body.key }));
    expect(again.error.payload.code).to.equal('E_AUTH');
    expect(again.close.code).to.equal(4401);
  });

  it("refuses a hello naming another project's id with E_AUTH and close 4403", async () => {
    const other = await t.newProject('write');
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    const helloId = executor.send('hello', { executor: 'runner', capabilities: {}, projectId: other.projectId });
    const { error, close } = await refused(executor);
    expect(error.payload.code).to.equal('E_AUTH');
    expect(error.ref).to.equal(helloId);
    expect(close.code).to.equal(4403);
    const sessions = await t.request('GET', '/otp/sessions?status=all', { key: other.key });
    expect(sessions.body.items).to.deep.equal([]);
  });

  it('answers another major version with E_VERSION and closes with 4426', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    executor.send('hello', { executor: 'runner', capabilities: {} }, { otp: '2.0' });
    const { error, close } = await refused(executor);
    expect(error.payload.code).to.equal('E_VERSION');
    expect(close.code).to.equal(4426);
  });

  it('answers malformed frames with E_INVALID_FRAME, keeps the session, and closes after three in a row', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    await executor.hello();
    executor.raw('{not json');
    expect((await executor.next('error')).payload.code).to.equal('E_INVALID_FRAME');
    executor.raw('[1,2,3]');
    expect((await executor.next('error')).payload.message).to.contain('object');
    // A valid frame in between resets the count.
    executor.send('ack', {}, { ref: 'msg_x' });
    const badId = executor.send('step.result', { stepIndex: 0, status: 'maybe' }, { runId: 'otr_x', ref: 'msg_y' });
    const schemaError = await executor.next('error');
    expect(schemaError.payload.code).to.equal('E_INVALID_FRAME');
    expect(schemaError.ref).to.equal(badId);
    expect(JSON.stringify(schemaError.payload.details)).to.contain('payload.status');
    executor.raw('nope');
    await executor.next('error');
    executor.raw('still nope');
    await executor.next('error');
    const close = await executor.closed;
    expect(close.code).to.equal(4400);
  });

  it('answers a frame nested too deeply to validate with E_INVALID_FRAME; the process survives', async () => {
    // Locators nest through `within`; under 1 MiB a frame can nest ~30,000 deep, which overflows the
    // validator's stack. That must be the sender's error, not the end of the service.
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    await executor.hello();
    const depth = 30_000;
    const locator = `${'{"by":"css","value":"a","within":'.repeat(depth)}{"by":"css","value":"a"}${'}'.repeat(depth)}`;
    const id = 'msg_deep';
    executor.raw(
      `{"otp":"1.0","id":"${id}","ts":"${new Date().toISOString()}","type":"step.result","sessionId":"${executor.sessionId}",` +
        `"runId":"otr_x","ref":"msg_y","payload":{"stepIndex":0,"status":"pass","usedLocator":${locator}}}`,
    );
    const error = await executor.next('error');
    expect(error.payload).to.include({ code: 'E_INVALID_FRAME', message: 'frame nests too deeply to be checked' });
    expect(error.ref).to.equal(id);
    const other = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    expect((await other.hello()).type).to.equal('welcome');
    other.close();
    executor.close();
  });

  // A hello padded with JSON white space to a given size in bytes.
  const paddedHello = (bytes: number) => {
    const hello = JSON.stringify({
      otp: '1.0',
      id: 'msg_padded',
      ts: new Date().toISOString(),
      type: 'hello',
      payload: { executor: 'runner', name: 'padded', version: '1', capabilities: {} },
    });
    return hello + ' '.repeat(bytes - Buffer.byteLength(hello));
  };

  it('takes a frame of exactly 1 MiB', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    executor.raw(paddedHello(1024 * 1024));
    expect((await executor.next('welcome')).ref).to.equal('msg_padded');
    executor.close();
  });

  it('answers a frame one byte over 1 MiB with an error and closes with 1009; the service keeps serving', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    executor.raw(paddedHello(1024 * 1024 + 1));
    const error = await executor.next('error');
    expect(error.payload.message).to.contain('exceeds');
    expect((await executor.closed).code).to.equal(1009);
    const next = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    expect((await next.hello()).type).to.equal('welcome');
    next.close();
  });

  it('pings every keepaliveSec, and closes a session whose pong does not come with 4408', async () => {
    const executor = await TestExecutor.connect(t.otpUrl, { key: t.adminKey });
    await executor.hello();
    const ping = await executor.next('ping', () => true, 3000);
    expect(ping.sessionId).to.equal(executor.sessionId);
    executor.send('pong', {}, { ref: ping.id });
    const second = await executor.next('ping', () => true, 3000);
    expect(second.id).not.to.equal(ping.id);
    // Now stay silent.
    const close = await executor.closed;
    expect(close.code).to.equal(4408);
    await eventually(async () => {
      const session = await t.request('GET', `/otp/sessions/${executor.sessionId}`);
      expect(session.body).to.include({ status: 'closed', closeCode: 4408 });
    });
  });
});
