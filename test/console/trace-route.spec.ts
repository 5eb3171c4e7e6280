// GET /api/v1/otp/runs/:id/trace: the run machine's transitions, recorded by the engine, kept with the
// run, described in /openapi.json (the test service checks every answer against it) and project-scoped.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { CHECKOUT_STEPS, newProject } from './seed.js';

describe('OTP: the run machine trace', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100, traceFlushMs: 50 } });
  });
  after(async () => t?.stop());

  it('answers the transitions live from the driving process, and as written with the verdict once finished', async () => {
    const p = await newProject(t);
    const caseId = await p.testCase('Checkout', CHECKOUT_STEPS);
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.id as string;
    const queued = await p.req('GET', `/otp/runs/${runId}/trace`);
    expect(queued.status).to.equal(200);
    expect(queued.body).to.deep.equal({ runId, status: 'queued', transitions: [], dropped: 0, live: false });

    const executor = await p.executor();
    const exec = await executor.next('step.exec');
    const live = await p.req('GET', `/otp/runs/${runId}/trace`);
    expect(live.body).to.include({ runId, status: 'running', live: true, dropped: 0 });
    expect(live.body.transitions.map((x: any) => [x.event, x.from, x.to])).to.deep.equal([
      ['xstate.init', null, 'advancing'],
      ['always', 'advancing', 'running'],
    ]);
    // The flush writes it for every other process within OTP_TRACE_FLUSH_MS (here 50 ms).
    await eventually(async () => {
      const row = await t.service.db('otp_runs').where('id', runId).first('trace');
      expect(row.trace).to.have.length(2);
    });

    executor.result(exec, 'pass');
    for (let i = 1; i < CHECKOUT_STEPS.length; i++)
      executor.result(await executor.next('step.exec'), i === 3 ? 'fail' : 'pass');
    await executor.next('run.finished');
    const done = await p.req('GET', `/otp/runs/${runId}/trace`);
    expect(done.body).to.include({ status: 'failed', live: false, dropped: 0 });
    const steps = done.body.transitions.map((x: any) => `${x.event}:${x.from}>${x.to}`);
    expect(steps).to.deep.equal([
      'xstate.init:null>advancing',
      'always:advancing>running',
      ...Array(3).fill(['STEP_RESULT:running>recording', 'STEPS_RECORDED:recording>running']).flat(),
      'STEP_RESULT:running>finishing',
      'RUN_FINISH_WRITTEN:finishing>done',
    ]);
    for (const x of done.body.transitions) expect(Date.parse(x.at)).to.be.a('number').and.not.NaN;
    // Kept with the run, the frames each transition sent (for the console's time line); REST leaves them out.
    const stored = (await t.service.db('otp_runs').where('id', runId).first('trace')).trace;
    expect(stored.map((x: any) => x.sends ?? [])).to.deep.equal([
      ['run.start'],
      ['step.exec'],
      ...Array(3)
        .fill([[], ['step.exec']])
        .flat(),
      [],
      ['run.finished'],
    ]);
    expect(done.body.transitions.filter((x: any) => 'sends' in x)).to.deep.equal([]);
    executor.close();
  });

  it('labels a delayed transition by its delay, and keeps at most the last 500 transitions', async () => {
    const p = await newProject(t);
    const many = Array.from({ length: 300 }, (_, i) => ({ otp: { action: 'wait', ms: i } }));
    const caseId = await p.testCase('Long', [...many, { otp: { action: 'wait', ms: 1 }, timeoutMs: 100 }]);
    const executor = await p.executor();
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.id as string;
    for (let i = 0; i < 300; i++) executor.result(await executor.next('step.exec'), 'pass');
    await executor.next('step.exec'); // the last one is never answered: it times out
    await executor.next('run.finished', () => true, 5000);
    const trace = (await p.req('GET', `/otp/runs/${runId}/trace`)).body;
    expect(trace.transitions).to.have.length(500);
    // 2 at the start, 2 per step answered, then the time-out, the way out of advancing and the verdict.
    expect(trace.dropped).to.equal(2 + 300 * 2 + 3 - 500);
    expect(trace.transitions.slice(-3).map((x: any) => `${x.event}:${x.from}>${x.to}`)).to.deep.equal([
      'after stepTimeout:running>advancing',
      'always:advancing>finishing',
      'RUN_FINISH_WRITTEN:finishing>done',
    ]);
    executor.close();
  });

  it('flushes what was added since the last flush: other processes read the same last 500 the driving one holds', async () => {
    const p = await newProject(t);
    const caseId = await p.testCase(
      'Flushed',
      Array.from({ length: 300 }, (_, i) => ({ otp: { action: 'wait', ms: i } })),
    );
    const executor = await p.executor();
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.id as string;
    const written = async () => {
      const row = await t.service.db('otp_runs').where('id', runId).first('trace', 'trace_dropped');
      // As REST answers it: without the frames each transition sent.
      const transitions = (row.trace ?? []).map(({ sends: _sends, ...x }: any) => x);
      return { transitions, dropped: row.trace_dropped ?? 0 };
    };
    let exec = await executor.next('step.exec');
    let answered = 0;
    // 22 transitions (one flush or more), then 402, then 600 of which the first 100 are dropped.
    for (const upTo of [10, 200, 299]) {
      for (; answered < upTo; answered++) {
        executor.result(exec, 'pass');
        exec = await executor.next('step.exec');
      }
      const live = (await p.req('GET', `/otp/runs/${runId}/trace`)).body;
      expect(live.transitions).to.have.length(Math.min(500, 2 + 2 * upTo));
      await eventually(async () =>
        expect(await written()).to.deep.equal({ transitions: live.transitions, dropped: live.dropped }),
      );
    }
    expect((await written()).dropped).to.equal(100);
    executor.result(exec, 'pass');
    await executor.next('run.finished');
    executor.close();
  });

  it("is a 404 for another project's run and a 401 without a key", async () => {
    const p = await newProject(t);
    const other = await newProject(t);
    const caseId = await p.testCase('Mine', CHECKOUT_STEPS);
    const runId = (await p.req('POST', '/otp/runs', { testCaseIds: [caseId] })).body.id as string;
    const foreign = await other.req('GET', `/otp/runs/${runId}/trace`);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('NOT_FOUND');
    expect((await t.request('GET', `/otp/runs/${runId}/trace`, { key: null })).status).to.equal(401);
    const doc = (await t.request('GET', '/openapi.json')).body;
    expect(doc.paths['/api/v1/otp/runs/{id}/trace'].get.operationId).to.equal('getOtpRunTrace');
  });
});
