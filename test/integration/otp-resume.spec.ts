// Resuming a session after a dropped connection (docs/protocol.md, "Resuming a session"), in one
// service process: real sockets, real PostgreSQL.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { describeEachTransport } from '../support/transports.js';

const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };
// Long enough for any resume below on a loaded machine; short enough to watch one expire.
const RESUME_WINDOW_MS = 3_000;

describeEachTransport('OTP: resuming a session after a dropped connection', (transport) => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { resumeWindowMs: RESUME_WINDOW_MS, transport } });
  });
  after(async () => t?.stop());

  async function project(steps = 3) {
    const { key, projectId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const caseId = (await req('POST', '/tests/cases', { title: 'resume', steps: Array(steps).fill(click) })).body
      .id as string;
    const executor = async (extra: Record<string, unknown> = {}) => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      const welcome = await e.hello({ maxParallel: 1 }, extra);
      return { e, welcome };
    };
    const startRun = async () => (await req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.runId as string;
    return { key, projectId, req, executor, startRun };
  }

  it('GET /otp/protocol says how long a session may be resumed', async () => {
    expect((await t.request('GET', '/otp/protocol', { key: null })).body.resumeWindowMs).to.equal(RESUME_WINDOW_MS);
  });

  it('resumes mid-step: same session id, the lost step.exec again with the same id, the run passes with each step recorded once', async () => {
    const p = await project(3);
    const { e: first, welcome } = await p.executor();
    const sessionId = welcome.payload.sessionId as string;
    const runId = await p.startRun();
    await first.next('run.start');
    first.result(await first.next('step.exec'), 'pass');
    const exec1 = await first.next('step.exec');
    expect(exec1.payload.stepIndex).to.equal(1);
    // The connection drops mid-step: no close frame, the result of step 1 never sent.
    first.terminate();
    await first.closed;
    await eventually(async () =>
      expect((await p.req('GET', `/otp/sessions/${sessionId}`)).body.status).to.equal('open'),
    );

    const { e: second, welcome: resumed } = await p.executor({ resumeSessionId: sessionId });
    expect(resumed.sessionId).to.equal(sessionId);
    expect(resumed.payload).to.deep.include({ sessionId, resumed: true });
    const again = await second.next('step.exec');
    expect(again.id, 'the same step.exec, by its id').to.equal(exec1.id);
    expect(again.payload).to.deep.equal(exec1.payload);
    second.result(again, 'pass', { actual: 'once' });
    const exec2 = await second.next('step.exec');
    expect(exec2.payload.stepIndex).to.equal(2);
    // A duplicate of step 1's result changes nothing.
    second.result(again, 'fail', { actual: 'twice' });
    const refused = await second.next('error');
    expect(refused.payload.code).to.equal('E_UNEXPECTED');
    expect(refused.payload.message).to.include('step 1 already has a result');
    second.result(exec2, 'pass');
    const finished = await second.next('run.finished');
    expect(finished.payload).to.deep.include({ runId, status: 'passed', passed: 3, failed: 0 });

    const run = (await p.req('GET', `/otp/runs/${runId}`)).body;
    expect(run.status).to.equal('passed');
    expect(run.steps.map((s: { status: string }) => s.status)).to.deep.equal(['pass', 'pass', 'pass']);
    expect(run.steps[1].actual).to.equal('once');
    expect(second.violations).to.deep.equal([]);
    second.close();
  });

  it('a step whose result was sent before the drop is not sent again; the next step is', async () => {
    const p = await project(2);
    const { e: first, welcome } = await p.executor();
    const runId = await p.startRun();
    const exec0 = await first.next('step.exec');
    first.result(exec0, 'pass');
    const exec1 = await first.next('step.exec');
    first.terminate();
    await first.closed;
    const { e: second } = await p.executor({ resumeSessionId: welcome.payload.sessionId });
    const again = await second.next('step.exec');
    expect(again.payload.stepIndex).to.equal(1);
    expect(again.id).to.equal(exec1.id);
    second.result(again, 'pass');
    expect((await second.next('run.finished')).payload).to.deep.include({ runId, status: 'passed', passed: 2 });
    second.close();
  });

  it('takes a session over from a socket that still looks alive (4409 on the old one)', async () => {
    const p = await project(2);
    const { e: first, welcome } = await p.executor();
    const runId = await p.startRun();
    const exec0 = await first.next('step.exec');
    const { e: second, welcome: resumed } = await p.executor({ resumeSessionId: welcome.payload.sessionId });
    expect(resumed.payload.resumed).to.equal(true);
    expect((await first.closed).code).to.equal(4409);
    const again = await second.next('step.exec');
    expect(again.id).to.equal(exec0.id);
    second.result(again, 'pass');
    second.result(await second.next('step.exec'), 'pass');
    expect((await second.next('run.finished')).payload).to.deep.include({ runId, status: 'passed' });
    second.close();
  });

  it('delivers on resume what happened meanwhile: a cancel, then run.finished', async () => {
    const p = await project(3);
    const { e: first, welcome } = await p.executor();
    const runId = await p.startRun();
    await first.next('step.exec');
    // A close the service answers (any code but 1000): once it is answered the session is detached,
    // so the cancel below happens while it is.
    first.ws.close(4000, 'blip');
    expect((await first.closed).code).to.equal(4000);
    const cancelled = await p.req('POST', `/otp/runs/${runId}/cancel`);
    expect(cancelled.body.status).to.equal('cancelled');
    const { e: second } = await p.executor({ resumeSessionId: welcome.payload.sessionId });
    expect((await second.next('run.cancel')).runId).to.equal(runId);
    expect((await second.next('run.finished')).payload).to.deep.include({ runId, status: 'cancelled' });
    expect(second.frames.filter((f) => f.type === 'step.exec')).to.deep.equal([]);
    second.close();
  });

  it('refuses a key of another project, and a session past its window, whose run ended error', async () => {
    const p = await project(2);
    const other = await project(1);
    const { e: first, welcome } = await p.executor();
    const sessionId = welcome.payload.sessionId as string;
    const runId = await p.startRun();
    await first.next('step.exec');
    first.terminate();
    await first.closed;

    const stranger = await TestExecutor.connect(t.otpUrl, { key: other.key });
    const helloId = stranger.send('hello', { executor: 'runner', capabilities: {}, resumeSessionId: sessionId });
    const refusal = await stranger.next('error');
    expect(refusal.ref).to.equal(helloId);
    expect(refusal.payload.code).to.equal('E_UNEXPECTED');
    expect(refusal.payload.message).to.include(`session ${sessionId} cannot be resumed`);
    // The refused connection may still open a session of its own.
    expect((await stranger.hello()).payload.resumed).to.equal(undefined);
    stranger.close();

    // Nobody resumes it: after the window the run ends error, as when an executor is lost.
    const run = await eventually(async () => {
      const body = (await p.req('GET', `/otp/runs/${runId}`)).body;
      expect(body.status).to.equal('error');
      return body;
    }, RESUME_WINDOW_MS + 5_000);
    expect(run.reason).to.include(`not resumed within ${RESUME_WINDOW_MS} ms`);
    expect(run.steps[0].error.code).to.equal('E_INTERNAL');
    // Its row is marked closed once the session's recording (none here) is stopped: a moment after its runs end.
    await eventually(async () => {
      const session = (await p.req('GET', `/otp/sessions/${sessionId}`)).body;
      expect(session.status).to.equal('closed');
    });

    const late = await TestExecutor.connect(t.otpUrl, { key: p.key });
    late.send('hello', { executor: 'runner', capabilities: {}, resumeSessionId: sessionId });
    expect((await late.next('error')).payload.message).to.include('cannot be resumed');
    late.close();
  });
});
