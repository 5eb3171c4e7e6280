// Resuming a session on another service process: after a dropped connection that reconnects through
// another process, and after a drain (4503). Services on one database, real sockets; where both OTP
// transports load, neighbours use different ones, so a session also moves from one adapter to the other.
import { expect } from 'chai';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { type Service, startService } from '../../src/service.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { TRANSPORTS } from '../support/transports.js';

const click = { otp: { action: 'click', locator: { by: 'css', value: '#go' } } };

describe('OTP: resuming a session on another service process', () => {
  let a: TestService;
  let b: Service;
  // A third process, drained by the last test.
  let c: Service;
  const more: Service[] = [];

  const transports = [TRANSPORTS[0]!, TRANSPORTS[TRANSPORTS.length - 1]!];
  let started = 0;
  const another = (drainMs = 0) =>
    startService(
      loadConfig(process.env, {
        port: 0,
        wsPort: 0,
        host: '127.0.0.1',
        dataDir: a.service.config.dataDir,
        databaseUrl: a.database.url,
        bootstrapKey: a.adminKey,
        drainMs,
        otp: { resumeWindowMs: 10_000, transport: transports[++started % 2] },
      }),
      createLogger(process.env.TEST_LOG === '1' ? 'debug' : 'silent'),
    );

  before(async () => {
    a = await startTestService({ otp: { resumeWindowMs: 10_000, transport: transports[0] } });
    b = await another();
    c = await another();
  });
  after(async () => {
    for (const s of more) await s.stop();
    await c?.stop();
    await b?.stop();
    await a?.stop();
  });

  async function project(steps: number) {
    const { key } = await a.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => a.request(method, path, { key, body });
    const caseId = (await req('POST', '/tests/cases', { title: 'across', steps: Array(steps).fill(click) })).body
      .id as string;
    return {
      key,
      req,
      startRun: async () => (await req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.runId as string,
    };
  }

  it('a session dropped on one process is resumed on the other: the run goes on from its step in flight and passes', async () => {
    const p = await project(3);
    const first = await TestExecutor.connect(`${a.otpUrl}`, { key: p.key });
    const sessionId = (await first.hello()).payload.sessionId as string;
    const runId = await p.startRun();
    first.result(await first.next('step.exec'), 'pass', { actual: 'on a' });
    const exec1 = await first.next('step.exec');
    first.terminate();
    await first.closed;

    const second = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key });
    const welcome = await second.hello({}, { resumeSessionId: sessionId });
    expect(welcome.payload).to.deep.include({ sessionId, resumed: true });
    // Another process sends it: same run and step, not necessarily the same frame id.
    const again = await second.next('step.exec');
    expect({ runId: again.runId, payload: again.payload }).to.deep.equal({ runId, payload: exec1.payload });
    // run.start comes again (the executor already has the run and ignores it).
    expect((await second.next('run.start')).runId).to.equal(runId);
    second.result(again, 'pass');
    second.result(await second.next('step.exec'), 'pass');
    expect((await second.next('run.finished')).payload).to.deep.include({
      runId,
      status: 'passed',
      passed: 3,
      failed: 0,
    });

    const run = (await p.req('GET', `/otp/runs/${runId}`)).body;
    expect(run.steps.map((s: { status: string }) => s.status)).to.deep.equal(['pass', 'pass', 'pass']);
    expect(run.steps[0].actual).to.equal('on a');
    const rows = await a.service.db('otp_runs').where('id', runId).first('instance_id', 'session_id');
    expect(rows).to.deep.equal({ instance_id: b.instanceId, session_id: sessionId });
    expect((await p.req('GET', `/otp/sessions/${sessionId}`)).body.status).to.equal('open');
    expect(second.violations).to.deep.equal([]);
    second.close();
  });

  it('a fleet resuming at once on another process: every ask acknowledged, every session back, each run going on from its step', async () => {
    const p = await project(2);
    const fleet = await Promise.all(
      Array.from({ length: 12 }, () => TestExecutor.connect(`${a.otpUrl}`, { key: p.key })),
    );
    const sessionIds = await Promise.all(fleet.map(async (e) => (await e.hello()).payload.sessionId as string));
    const runIds: string[] = [];
    for (let i = 0; i < fleet.length; i++) runIds.push(await p.startRun());
    const execs = await Promise.all(fleet.map((e) => e.next('step.exec')));
    // What the processes say to each other, heard as a third listener.
    const listener = new pg.Client({ connectionString: a.database.url });
    await listener.connect();
    const acks: string[][] = [];
    listener.on('notification', (msg) => {
      const notice = JSON.parse(msg.payload ?? '{}');
      if (notice.kind === 'handoff-ack' && notice.to === b.instanceId) acks.push(notice.sessionIds);
    });
    await listener.query('LISTEN otp_events');
    for (const e of fleet) e.terminate();
    await Promise.all(fleet.map((e) => e.closed));
    try {
      const back = await Promise.all(fleet.map(() => TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key })));
      const welcomes = await Promise.all(back.map((e, i) => e.hello({}, { resumeSessionId: sessionIds[i] })));
      expect(welcomes.map((w) => w.payload.resumed)).to.deep.equal(fleet.map(() => true));
      await Promise.all(
        back.map(async (e, i) => {
          const again = await e.next('step.exec');
          expect(again.payload.stepIndex).to.equal(execs[i]!.payload.stepIndex);
          e.result(again, 'pass');
          e.result(await e.next('step.exec'), 'pass');
          expect((await e.next('run.finished')).payload).to.deep.include({ status: 'passed', passed: 2 });
          e.close();
        }),
      );
      // Every ask was acknowledged (the asker then waits for a busy holder longer than for a gone one).
      expect(acks.flat().sort()).to.deep.equal([...sessionIds].sort());
      const rows = await a.service.db('otp_runs').whereIn('id', runIds).pluck('instance_id');
      expect(rows).to.deep.equal(runIds.map(() => b.instanceId));
    } finally {
      await listener.end();
    }
  });

  it('the asks a holder hears together are acknowledged in one notice and handed over in one transaction', async () => {
    const p = await project(1);
    const fleet = await Promise.all(
      Array.from({ length: 12 }, () => TestExecutor.connect(`${a.otpUrl}`, { key: p.key })),
    );
    const sessionIds = await Promise.all(fleet.map(async (e) => (await e.hello()).payload.sessionId as string));
    for (const e of fleet) e.terminate();
    await Promise.all(fleet.map((e) => e.closed));
    // The test is the asking process: its asks sent in one statement reach the holder together.
    const asker = 'test-asker';
    const listener = new pg.Client({ connectionString: a.database.url });
    await listener.connect();
    const heard: Array<{ kind: string; sessionId?: string; sessionIds?: string[]; ok?: boolean }> = [];
    const answered = new Promise<void>((resolve) => {
      listener.on('notification', (msg) => {
        const notice = JSON.parse(msg.payload ?? '{}');
        if (notice.to !== asker || notice.kind === 'handoff') return;
        heard.push(notice);
        if (heard.filter((n) => n.kind === 'handed-off').length === sessionIds.length) resolve();
      });
    });
    try {
      await listener.query('LISTEN otp_events');
      const asks = sessionIds.map((sessionId) =>
        JSON.stringify({ kind: 'handoff', sessionId, holder: a.service.instanceId, to: asker, from: asker }),
      );
      await listener.query('SELECT count(pg_notify($1, p)) FROM unnest($2::text[]) AS p', ['otp_events', asks]);
      await answered;
      const acks = heard.filter((n) => n.kind === 'handoff-ack');
      expect(acks.map((n) => [...n.sessionIds!].sort())).to.deep.equal([[...sessionIds].sort()]);
      const answers = heard.filter((n) => n.kind === 'handed-off');
      expect(answers.every((n) => n.ok)).to.equal(true);
      // The acknowledgement came before the first answer.
      expect(heard[0]!.kind).to.equal('handoff-ack');
      const held = await a.service.db('otp_sessions').whereIn('id', sessionIds).pluck('instance_id');
      expect(held).to.deep.equal(sessionIds.map(() => asker));
      // Handed over together: one transaction gave every row the same transaction id.
      const moved = await a.service
        .db('otp_sessions')
        .whereIn('id', sessionIds)
        .distinct(a.service.db.raw('xmin::text'));
      expect(moved).to.have.length(1);
    } finally {
      await listener.end();
    }
  });

  it('refuses to resume a session no process holds any more', async () => {
    const p = await project(1);
    const first = await TestExecutor.connect(`${a.otpUrl}`, { key: p.key });
    const sessionId = (await first.hello()).payload.sessionId as string;
    first.close();
    await first.closed;
    const second = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key });
    second.send('hello', { executor: 'runner', capabilities: {}, resumeSessionId: sessionId });
    expect((await second.next('error')).payload.message).to.include(`session ${sessionId} cannot be resumed`);
    second.close();
  });

  it('a draining process tells its executor to reconnect (4503); resumed on the other process, the run passes', async () => {
    const p = await project(3);
    const first = await TestExecutor.connect(`${c.wsUrl}/otp`, { key: p.key });
    const sessionId = (await first.hello()).payload.sessionId as string;
    const runId = await p.startRun();
    first.result(await first.next('step.exec'), 'pass');
    const exec1 = await first.next('step.exec');
    expect(c.engine.draining).to.equal(false);
    const stopped = c.stop();
    expect(c.engine.draining).to.equal(true);
    const closed = await first.closed;
    expect(closed.code).to.equal(4503);

    const second = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key });
    expect((await second.hello({}, { resumeSessionId: sessionId })).payload.resumed).to.equal(true);
    const again = await second.next('step.exec');
    expect(again.payload.stepIndex).to.equal(exec1.payload.stepIndex);
    second.result(again, 'pass');
    second.result(await second.next('step.exec'), 'pass');
    expect((await second.next('run.finished')).payload).to.deep.include({ runId, status: 'passed', passed: 3 });
    await stopped;
    const row = await b.db('otp_runs').where('id', runId).first('status', 'instance_id');
    expect(row).to.deep.equal({ status: 'passed', instance_id: b.instanceId });
    second.close();
  });

  it('a drain first tells each executor when to come back (reconnect: retryAfterMs, spread over the fleet), then closes 4503', async () => {
    const p = await project(1);
    const d = await another(0);
    more.push(d);
    const fleet = await Promise.all([0, 1, 2, 3].map(() => TestExecutor.connect(`${d.wsUrl}/otp`, { key: p.key })));
    const sessionIds: string[] = [];
    for (const executor of fleet) sessionIds.push((await executor.hello()).payload.sessionId as string);
    const stopped = d.stop();
    const delays: number[] = [];
    for (const [i, executor] of fleet.entries()) {
      const told = await executor.next('reconnect');
      expect(told.sessionId).to.equal(sessionIds[i]);
      expect((await executor.closed).code).to.equal(4503);
      delays.push(told.payload.retryAfterMs as number);
    }
    // Each its own time, from at once to a share of the resume window (10 s here): never all at once.
    expect(new Set(delays).size).to.equal(fleet.length);
    expect(Math.min(...delays)).to.equal(0);
    expect(Math.max(...delays)).to.be.below(10_000 / 3);
    // The executors come back (here at once) and every session resumes on the other process.
    for (const [i, sessionId] of sessionIds.entries()) {
      const back = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key });
      expect((await back.hello({}, { resumeSessionId: sessionId })).payload.resumed).to.equal(true);
      fleet[i] = back;
    }
    await stopped;
    for (const executor of fleet) executor.close();
  });

  it('a drain lets the run in flight finish and claims no new run; the queued run goes to the resumed session elsewhere', async () => {
    const p = await project(2);
    const d = await another(20_000);
    more.push(d);
    const first = await TestExecutor.connect(`${d.wsUrl}/otp`, { key: p.key });
    const sessionId = (await first.hello({ maxParallel: 2 })).payload.sessionId as string;
    const inFlight = await p.startRun();
    const exec0 = await first.next('step.exec');
    const stopped = d.stop();
    // Created during the drain: the draining process has room for it but does not claim it.
    const queued = await p.startRun();
    first.result(exec0, 'pass');
    first.result(await first.next('step.exec'), 'pass');
    expect((await first.next('run.finished')).payload).to.deep.include({ runId: inFlight, status: 'passed' });
    // Its last run done, the drain ends early: 4503, and the queued run was never started here.
    expect((await first.closed).code).to.equal(4503);
    expect(first.frames.filter((f) => f.type === 'run.start' && f.runId === queued)).to.deep.equal([]);
    expect((await p.req('GET', `/otp/runs/${queued}`)).body.status).to.equal('queued');

    const second = await TestExecutor.connect(`${b.wsUrl}/otp`, { key: p.key });
    expect((await second.hello({}, { resumeSessionId: sessionId })).payload.resumed).to.equal(true);
    expect((await second.next('run.start')).runId).to.equal(queued);
    second.result(await second.next('step.exec'), 'pass');
    second.result(await second.next('step.exec'), 'pass');
    expect((await second.next('run.finished')).payload).to.deep.include({ runId: queued, status: 'passed' });
    await stopped;
    second.close();
  });
});
