// Recordings on the service side: record.start / event.recorded / record.stop over a real socket,
// the REST door to start and stop them, durability of each event, and the errors around them.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const step = (n: number) => ({
  otp: {
    action: 'click',
    locator: {
      candidates: [
        { by: 'testid', value: `b${n}` },
        { by: 'css', value: `#b${n}` },
      ],
    },
  },
  label: `Click ${n}`,
});
const typed = {
  otp: { action: 'type', locator: { by: 'label', value: 'Password' }, text: '{{secret_1}}', clear: true },
};

describe('Recordings: service side', function () {
  this.timeout(20_000);
  let svc: TestService;
  const open: TestExecutor[] = [];

  before(async () => {
    // A dropped socket ends its session at once here (no resume window): the tests are about closing.
    svc = await startTestService({ otp: { resumeWindowMs: 0 } });
  });
  after(async () => {
    for (const e of open) e.close();
    await svc?.stop();
  });

  async function executor(key = svc.adminKey): Promise<TestExecutor> {
    const e = await TestExecutor.connect(svc.otpUrl, { key });
    open.push(e);
    await e.hello({ record: true, replay: true });
    return e;
  }

  /** Sends event.recorded and waits for its ack (the event is durable once acked). */
  async function record(e: TestExecutor, s: unknown, recordingId?: string): Promise<void> {
    const id = e.send('event.recorded', {
      step: s,
      at: new Date().toISOString(),
      ...(recordingId ? { recordingId } : {}),
    });
    await e.next('ack', (f) => f.ref === id);
  }

  it('an executor starts, records and stops: a test case with the steps in order, events readable before the stop', async () => {
    const e = await executor();
    const ask = e.send('record.start', { title: 'Login flow', url: 'http://127.0.0.1:1/login' });
    const started = await e.next('record.start', (f) => f.ref === ask);
    const recordingId = started.payload.recordingId as string;
    expect(recordingId).to.match(/^rec_/);
    expect(started.payload.title).to.equal('Login flow');

    await record(e, { otp: { action: 'navigate', url: 'http://127.0.0.1:1/login' } }, recordingId);
    await record(e, step(1));
    await record(e, typed, recordingId);

    // Durable as they arrive: visible over REST while still recording.
    const during = await svc.request('GET', `/otp/recordings/${recordingId}`);
    expect(during.status).to.equal(200);
    expect(during.body).to.include({
      status: 'recording',
      eventCount: 3,
      sessionId: e.sessionId,
      startedBy: 'executor',
      testCaseId: null,
    });
    expect(during.body.events.map((ev: any) => ev.seq)).to.deep.equal([1, 2, 3]);
    expect(during.body.events[1].step).to.deep.equal(step(1));

    const stopId = e.send('record.stop', { recordingId });
    const stopped = await e.next('record.stop', (f) => f.ref === stopId);
    const testCaseId = stopped.payload.testCaseId as string;
    expect(testCaseId).to.match(/^tc_/);

    const tc = await svc.request('GET', `/tests/cases/${testCaseId}`);
    expect(tc.status).to.equal(200);
    expect(tc.body.title).to.equal('Login flow');
    expect(tc.body.steps).to.deep.equal([
      { otp: { action: 'navigate', url: 'http://127.0.0.1:1/login' } },
      step(1),
      typed,
    ]);
    expect(tc.body.labels).to.deep.equal(['recorded']);

    const after = await svc.request('GET', `/otp/recordings/${recordingId}`);
    expect(after.body).to.include({ status: 'stopped', testCaseId, stopReason: 'stopped by the executor' });

    // Stopping twice, and recording into a stopped recording, are refused with a reason.
    const again = e.send('record.stop', { recordingId });
    const refused = await e.next('error', (f) => f.ref === again);
    expect(refused.payload).to.deep.include({ code: 'E_UNEXPECTED', details: { testCaseId } });
    expect(refused.payload.message).to.contain('already stopped');
    const late = e.send('event.recorded', { step: step(9) });
    const lateError = await e.next('error', (f) => f.ref === late);
    expect(lateError.payload.message).to.contain('no recording is in progress');
    const rest = await svc.request('POST', `/otp/recordings/${recordingId}/stop`);
    expect(rest.status).to.equal(409);
    expect(rest.body.error.details).to.deep.include({ recordingId, testCaseId });
  });

  it('a REST caller starts and stops a recording on a connected session; the executor hears both', async () => {
    const e = await executor();
    const started = await svc.request('POST', `/otp/sessions/${e.sessionId}/recordings`, {
      body: { title: 'Checkout', url: 'http://127.0.0.1:1/shop' },
    });
    expect(started.status).to.equal(201);
    expect(started.body).to.include({
      status: 'recording',
      startedBy: 'request',
      title: 'Checkout',
      startUrl: 'http://127.0.0.1:1/shop',
      eventCount: 0,
    });
    const frame = await e.next('record.start');
    expect(frame.payload).to.deep.equal({
      recordingId: started.body.id,
      title: 'Checkout',
      url: 'http://127.0.0.1:1/shop',
    });

    // A second recording on the same session is refused while this one runs.
    const twice = await svc.request('POST', `/otp/sessions/${e.sessionId}/recordings`, { body: {} });
    expect(twice.status).to.equal(409);
    expect(twice.body.error.details.recordingId).to.equal(started.body.id);
    const askAgain = e.send('record.start', {});
    expect((await e.next('error', (f) => f.ref === askAgain)).payload.message).to.contain('already recording');

    await record(e, step(1));
    await record(e, step(2));
    // An event naming another recording is refused.
    const wrong = e.send('event.recorded', { step: step(3), recordingId: 'rec_nope' });
    expect((await e.next('error', (f) => f.ref === wrong)).payload.message).to.contain('not the one in progress');

    const stop = await svc.request('POST', `/otp/recordings/${started.body.id}/stop`);
    expect(stop.status).to.equal(200);
    expect(stop.body).to.include({ status: 'stopped', eventCount: 2, stopReason: 'stopped by request' });
    expect(stop.body.events.map((ev: any) => ev.step)).to.deep.equal([step(1), step(2)]);
    const told = await e.next('record.stop');
    expect(told.payload).to.deep.equal({
      recordingId: started.body.id,
      testCaseId: stop.body.testCaseId,
      reason: 'stopped by request',
    });
    const tc = await svc.request('GET', `/tests/cases/${stop.body.testCaseId}`);
    expect(tc.body.steps).to.deep.equal([step(1), step(2)]);

    const twiceStop = await svc.request('POST', `/otp/recordings/${started.body.id}/stop`);
    expect(twiceStop.status).to.equal(409);
    expect(twiceStop.body.error.message).to.contain('already stopped');

    const listed = await svc.request('GET', '/otp/recordings?status=stopped');
    expect(listed.status).to.equal(200);
    expect(listed.body.items.map((r: any) => r.id)).to.include(started.body.id);
  });

  it("refuses unknown ids, closed sessions and another project's sessions and recordings", async () => {
    const other = await svc.newProject('write');
    const theirs = await executor(other.key);
    const mine = await executor();

    expect((await svc.request('POST', '/otp/sessions/ots_unknown/recordings', { body: {} })).status).to.equal(404);
    const foreign = await svc.request('POST', `/otp/sessions/${theirs.sessionId}/recordings`, { body: {} });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('NOT_FOUND');
    expect((await svc.request('GET', '/otp/recordings/rec_unknown')).status).to.equal(404);
    expect((await svc.request('POST', '/otp/recordings/rec_unknown/stop')).status).to.equal(404);

    const started = await svc.request('POST', `/otp/sessions/${theirs.sessionId}/recordings`, {
      key: other.key,
      body: {},
    });
    expect(started.status).to.equal(201);
    expect((await svc.request('GET', `/otp/recordings/${started.body.id}`)).status).to.equal(404);
    expect((await svc.request('POST', `/otp/recordings/${started.body.id}/stop`)).status).to.equal(404);
    const bad = await svc.request('POST', `/otp/sessions/${mine.sessionId}/recordings`, { body: { title: '' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details.fields[0].field).to.equal('body.title');

    mine.close();
    await mine.closed;
    // The session is marked closed once the socket is gone.
    await eventually(async () =>
      expect((await svc.request('GET', `/otp/sessions/${mine.sessionId}`)).body.status).to.equal('closed'),
    );
    const closed = await svc.request('POST', `/otp/sessions/${mine.sessionId}/recordings`, { body: {} });
    expect(closed.status).to.equal(409);
    expect(closed.body.error.message).to.contain('closed');
  });

  it('a session that closes while recording keeps its steps as a test case', async () => {
    const e = await executor();
    const ask = e.send('record.start', { title: 'Interrupted' });
    const { payload } = await e.next('record.start', (f) => f.ref === ask);
    await record(e, step(1));
    e.terminate();
    const view = await eventually(async () => {
      const { body } = await svc.request('GET', `/otp/recordings/${payload.recordingId}`);
      expect(body.testCaseId).to.be.a('string');
      return body;
    });
    expect(view).to.include({ status: 'stopped', stopReason: 'session closed' });
    const tc = await svc.request('GET', `/tests/cases/${view.testCaseId}`);
    expect(tc.body.steps).to.deep.equal([step(1)]);
  });
});
