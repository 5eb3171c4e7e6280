// A run never stays `running` with nobody driving it: a result PostgreSQL refuses ends only its own
// run (as `error`, in the database, with the reason), never the other runs of its group-commit batch;
// and the orphan check finishes runs whose driver is gone, whatever the cause.
import diagnostics from 'node:diagnostics_channel';
import { expect } from 'chai';
import { newId } from '../../src/ids.js';
import type { StepWriteMessage } from '../../src/otp/engine/diagnostics.js';
import { CLAIM_QUEUE, CLAIM_RUNS } from '../../src/otp/store/run-sql.js';
import { type NewRun, RunStore, type StepWrite } from '../../src/otp/store/run-store.js';
import { eventually } from '../support/eventually.js';
import { type Frame, TestExecutor } from '../support/executor.js';
import { insertOneStepRun } from '../support/queued-run.js';
import { startTestService, type TestService } from '../support/service.js';

const navigate = { otp: { action: 'navigate', url: 'https://app.test/' } };

describe('Runs left without a driver, and results that cannot be written', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ orphanCheckMs: 100, otp: { stepGraceMs: 100 } });
  });
  after(async () => t?.stop());

  async function project() {
    const { key, projectId, tenantId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const testCase = (await req('POST', '/tests/cases', { title: 'two steps', steps: [navigate, navigate] })).body
      .id as string;
    const run = async () => (await req('POST', '/otp/runs', { testCaseIds: [testCase] })).body.runId as string;
    return { key, projectId, tenantId, req, run };
  }

  it('retries a failed group-commit batch run by run: only the run whose row fails learns of it', async () => {
    const p = await project();
    const store = new RunStore(t.service.db);
    const runIds: string[] = [];
    for (let i = 0; i < 4; i++) {
      runIds.push(await insertOneStepRun(store, p));
    }
    const [first, ok1, poisoned, ok2] = runIds as [string, string, string, string];
    const write = (runId: string, actual?: string): StepWrite[] => [
      {
        runId,
        outcome: {
          stepIndex: 0,
          status: 'pass',
          source: 'executor',
          durationMs: 1,
          ...(actual === undefined ? {} : { actual }),
        } as StepWrite['outcome'],
      },
    ];
    const statements: number[] = [];
    const listen = (m: unknown) => statements.push((m as StepWriteMessage).rows);
    diagnostics.subscribe('otp:step.write', listen);
    try {
      // The first write goes at once, alone; the three that arrive while it is in flight share the next statement.
      const results = await Promise.allSettled([
        store.writeSteps(write(first)),
        store.writeSteps(write(ok1)),
        // A value the statement cannot store (jsonb refuses \u0000): the shared statement fails whole.
        store.writeSteps(write(poisoned, 'a\u0000b')),
        store.writeSteps(write(ok2)),
      ]);
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      // The batch of three failed; its two good runs were then written each on its own.
      expect(statements).to.deep.equal([1, 1, 1]);
    } finally {
      diagnostics.unsubscribe('otp:step.write', listen);
    }
    const rows = await t.service.db('otp_run_steps').whereIn('run_id', runIds).select('run_id', 'status');
    const status = Object.fromEntries(rows.map((r: { run_id: string; status: string }) => [r.run_id, r.status]));
    expect(status).to.deep.equal({ [first]: 'pass', [ok1]: 'pass', [poisoned]: 'pending', [ok2]: 'pass' });
    await t.service.db('otp_runs').whereIn('id', runIds).update({ status: 'cancelled' });
  });

  it('writes the verdicts that arrive together in one statement, and a verdict that fails fails alone', async () => {
    const p = await project();
    const store = new RunStore(t.service.db);
    const runIds: string[] = [];
    for (let i = 0; i < 4; i++) runIds.push(await insertOneStepRun(store, p));
    const [first, ok1, poisoned, ok2] = runIds as [string, string, string, string];
    const finish = (runId: string, actual?: string) =>
      store.finishRun({
        runId,
        projectId: p.projectId,
        status: 'passed',
        counts: { total: 1, passed: 1, failed: 0, skipped: 0 },
        outcomes: [
          {
            stepIndex: 0,
            status: 'pass',
            source: 'executor',
            durationMs: 1,
            ...(actual === undefined ? {} : { actual }),
          } as StepWrite['outcome'],
        ],
        trace: {
          transitions: [{ at: new Date().toISOString(), event: 'RUN_FINISH_WRITTEN', from: 'finishing', to: 'done' }],
          dropped: 0,
        },
      });
    // This store has no connections of its own: its statements go through knex, where they can be counted.
    const verdictStatements: number[] = [];
    const counted = (q: { sql: string; bindings?: unknown[] }) => {
      if (q.sql.includes('UPDATE otp_runs r') && q.sql.includes('AS v(id text'))
        verdictStatements.push(Number(q.bindings?.[1]));
    };
    t.service.db.on('query', counted);
    try {
      // The first verdict goes at once, alone; the three that arrive while it is in flight share the next statement.
      const results = await Promise.allSettled([finish(first), finish(ok1), finish(poisoned, 'a\u0000b'), finish(ok2)]);
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      // The shared statement failed whole (jsonb refuses \u0000); each of its verdicts was then tried alone.
      expect(verdictStatements).to.deep.equal([1, 3, 1, 1, 1]);
    } finally {
      t.service.db.off('query', counted);
    }
    const rows = await t.service.db('otp_runs').whereIn('id', runIds).select('id', 'status', 'trace', 'passed');
    const byId = Object.fromEntries(
      rows.map((r: { id: string; status: string; trace: unknown[] | null; passed: number }) => [r.id, r]),
    );
    for (const runId of [first, ok1, ok2]) {
      expect(byId[runId].status, runId).to.equal('passed');
      expect(byId[runId].passed).to.equal(1);
      expect(byId[runId].trace).to.have.length(1);
    }
    expect(byId[poisoned].status).to.equal('queued');
    const steps = await t.service
      .db('otp_run_steps')
      .whereIn('run_id', runIds)
      .orderBy('run_id')
      .select('run_id', 'status');
    expect(
      Object.fromEntries(steps.map((s: { run_id: string; status: string }) => [s.run_id, s.status])),
    ).to.deep.equal({
      [first]: 'pass',
      [ok1]: 'pass',
      [poisoned]: 'pending',
      [ok2]: 'pass',
    });
    await t.service.db('otp_runs').where('id', poisoned).update({ status: 'cancelled' });
  });

  it('ends a run one way only: a verdict that comes after the run was ended without its driver changes nothing', async () => {
    const p = await project();
    const store = new RunStore(t.service.db);
    const [ended, driven] = [await insertOneStepRun(store, p), await insertOneStepRun(store, p)];
    // Ended as a stopped process's runs are: the unreported step skipped with the code given.
    await store.finishUndriven([ended], { status: 'error', code: 'E_INTERNAL', reason: 'the process is gone' });
    const late = await store.finishRun({
      runId: ended,
      projectId: p.projectId,
      status: 'passed',
      counts: { total: 1, passed: 1, failed: 0, skipped: 0 },
      outcomes: [{ stepIndex: 0, status: 'pass', source: 'executor', durationMs: 1 }],
    });
    expect(late).to.deep.equal({ durationMs: 0, owesResults: false });
    // And the other order: a driven verdict stands; ending it without its driver afterwards changes nothing.
    await store.finishRun({
      runId: driven,
      projectId: p.projectId,
      status: 'failed',
      counts: { total: 1, passed: 0, failed: 1, skipped: 0 },
      outcomes: [
        {
          stepIndex: 0,
          status: 'fail',
          source: 'executor',
          durationMs: 1,
          error: { code: 'E_ASSERT_FAILED', message: 'no' },
        },
      ],
    });
    await store.finishUndriven([driven], { status: 'error', code: 'E_INTERNAL', reason: 'too late' });
    const runs = await t.service
      .db('otp_runs')
      .whereIn('id', [ended, driven])
      .select('id', 'status', 'reason', 'passed', 'failed', 'skipped');
    expect(
      Object.fromEntries(
        runs.map((r: any) => [
          r.id,
          { status: r.status, reason: r.reason, passed: r.passed, failed: r.failed, skipped: r.skipped },
        ]),
      ),
    ).to.deep.equal({
      [ended]: { status: 'error', reason: 'the process is gone', passed: 0, failed: 0, skipped: 1 },
      [driven]: { status: 'failed', reason: null, passed: 0, failed: 1, skipped: 0 },
    });
    const steps = await t.service
      .db('otp_run_steps')
      .whereIn('run_id', [ended, driven])
      .select('run_id', 'status', 'error');
    expect(Object.fromEntries(steps.map((s: any) => [s.run_id, [s.status, s.error.code]]))).to.deep.equal({
      [ended]: ['skip', 'E_INTERNAL'],
      [driven]: ['fail', 'E_ASSERT_FAILED'],
    });
  });

  it('inserts the runs that arrive together in one statement, each answered with its own row, and a run that fails fails alone', async () => {
    const p = await project();
    const store = new RunStore(t.service.db);
    const newRun = (title: string): NewRun => ({
      id: newId('otr'),
      tenantId: p.tenantId,
      projectId: p.projectId,
      requestedSessionId: null,
      vars: { title },
      allowedOrigins: [],
      testCases: [{ id: 'tc_x', title, steps: 2 }],
      planId: null,
      testRunId: null,
      finishTestRun: false,
      steps: [0, 1].map((stepIndex) => ({
        stepIndex,
        caseIndex: 0,
        testCaseId: 'tc_x',
        action: { action: 'navigate', url: 'https://a.test' },
        timeoutMs: 1000,
        continueOnFail: false,
      })),
    });
    // A value the statement cannot store (jsonb refuses \u0000) in the third run.
    const runs = [newRun('first'), newRun('ok1'), newRun('a\u0000b'), newRun('ok2')];
    const statements: number[] = [];
    const counted = (q: { sql: string; bindings?: unknown[] }) => {
      if (q.sql.includes('INSERT INTO otp_runs') && q.sql.includes('jsonb_to_recordset'))
        statements.push(Number(q.bindings?.[1]));
    };
    t.service.db.on('query', counted);
    try {
      // The first insert goes at once, alone; the three that arrive while it is in flight share the next statement.
      const results = await Promise.allSettled(runs.map((run) => store.insertRun(run)));
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(
        results.map((r) =>
          r.status === 'fulfilled' ? [r.value.id, r.value.status, (r.value.vars as { title: string }).title] : null,
        ),
      ).to.deep.equal([
        [runs[0]!.id, 'queued', 'first'],
        [runs[1]!.id, 'queued', 'ok1'],
        null,
        [runs[3]!.id, 'queued', 'ok2'],
      ]);
      // The shared statement failed whole; each of its runs was then tried alone.
      expect(statements).to.deep.equal([1, 3, 1, 1, 1]);
    } finally {
      t.service.db.off('query', counted);
    }
    const ids = runs.map((r) => r.id);
    const steps = await t.service
      .db('otp_run_steps')
      .whereIn('run_id', ids)
      .groupBy('run_id')
      .select('run_id')
      .count<{ run_id: string; count: string }[]>('* as n');
    expect(Object.fromEntries(steps.map((s: any) => [s.run_id, Number(s.n)]))).to.deep.equal({
      [ids[0]!]: 2,
      [ids[1]!]: 2,
      [ids[3]!]: 2,
    });
    expect(await t.service.db('otp_runs').whereIn('id', ids).pluck('id')).to.have.members([ids[0], ids[1], ids[3]]);
    await t.service.db('otp_runs').whereIn('id', ids).update({ status: 'cancelled' });
  });

  it('claims the runs this process planned without reading their steps back, as another process reads them', async () => {
    const p = await project();
    const planner = new RunStore(t.service.db);
    const other = new RunStore(t.service.db);
    const newRun = (title: string): NewRun => ({
      id: newId('otr'),
      tenantId: p.tenantId,
      projectId: p.projectId,
      requestedSessionId: null,
      vars: { title },
      allowedOrigins: ['https://a.test'],
      testCases: [{ id: 'tc_x', title, steps: 2 }],
      planId: null,
      testRunId: null,
      finishTestRun: false,
      steps: [
        {
          stepIndex: 0,
          caseIndex: 0,
          testCaseId: 'tc_x',
          action: { action: 'navigate', url: 'https://a.test' },
          timeoutMs: 1000,
          continueOnFail: false,
        },
        {
          stepIndex: 1,
          caseIndex: 0,
          testCaseId: 'tc_x',
          action: { action: 'click', locator: { by: 'css', value: '#go' } },
          timeoutMs: 2000,
          continueOnFail: true,
          evidence: 'always',
          label: 'Go',
        },
      ],
    });
    const [older, newer] = [newRun('older'), newRun('newer')];
    await planner.insertRun(older);
    await planner.insertRun(newer);
    expect(planner.planned.size).to.equal(2);
    // What each claim asked and what PostgreSQL answered.
    const claims: Array<{ known: unknown; steps: unknown[] }> = [];
    const asked: unknown[] = [];
    // Either claim statement (by the queue rule, or first come first served with OTP_QUEUE=fifo).
    // knex reports a raw statement with $n placeholders.
    const isClaim = (sql: string) => sql === CLAIM_QUEUE.text || sql === CLAIM_RUNS.text;
    const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
      if (isClaim(q.sql)) asked.push(q.bindings?.[5]);
    };
    const onResponse = (response: { rows?: Array<{ steps: unknown }> }, q: { sql: string }) => {
      if (isClaim(q.sql)) claims.push({ known: asked.shift(), steps: (response.rows ?? []).map((row) => row.steps) });
    };
    t.service.db.on('query', onQuery).on('query-response', onResponse);
    let fromDatabase, fromMemory;
    try {
      // Another process takes the older run: it knows neither, and reads its steps back.
      [fromDatabase] = await other.claimRuns({ id: 'ots_other', projectId: p.projectId }, 'ins_other', 1);
      // This process takes the newer: it names both it planned, and the newer comes back without steps.
      [fromMemory] = await planner.claimRuns({ id: 'ots_planner', projectId: p.projectId }, 'ins_planner', 1);
    } finally {
      t.service.db.off('query', onQuery).off('query-response', onResponse);
    }
    expect(claims.map((c) => c.known)).to.deep.equal([[], [older.id, newer.id]]);
    expect(claims[0]!.steps[0]).to.have.length(2);
    expect(claims[1]!.steps).to.deep.equal([null]);
    // The same run either way: as planned, the steps without their test case ids.
    const asClaimed = (run: NewRun) => ({
      id: run.id,
      projectId: run.projectId,
      vars: run.vars,
      allowedOrigins: run.allowedOrigins,
      testCases: run.testCases,
      steps: run.steps.map(({ testCaseId: _, ...step }) => step),
    });
    expect(fromDatabase).to.deep.equal(asClaimed(older));
    expect(fromMemory).to.deep.equal(asClaimed(newer));
    // The newer is forgotten once claimed; the older, claimed elsewhere, stays until it is the oldest.
    expect(planner.planned.size).to.equal(1);
    await t.service.db('otp_runs').whereIn('id', [older.id, newer.id]).update({ status: 'cancelled' });
  });

  it('ends a run whose result PostgreSQL refuses as error in the database, and the runs beside it pass', async () => {
    // A row the database refuses, as any constraint or storage failure would.
    await t.service.db.raw(
      `ALTER TABLE otp_run_steps ADD CONSTRAINT test_poison CHECK (actual IS DISTINCT FROM 'poison')`,
    );
    try {
      const p = await project();
      const executor = await TestExecutor.connect(t.otpUrl, { key: p.key });
      await executor.hello({ maxParallel: 3 });
      const runs = [await p.run(), await p.run(), await p.run()];
      const execs = new Map<string, Frame>();
      for (let i = 0; i < 3; i++) {
        const exec = await executor.next('step.exec');
        execs.set(exec.runId!, exec);
      }
      const [good1, bad, good2] = runs as [string, string, string];
      // All three results in one go: they travel to the writer together.
      executor.result(execs.get(good1)!, 'pass');
      executor.result(execs.get(bad)!, 'fail', { actual: 'poison' });
      executor.result(execs.get(good2)!, 'pass');
      const finished = await executor.next('run.finished', (f) => f.runId === bad);
      expect(finished.payload.status).to.equal('error');
      for (const runId of [good1, good2])
        executor.result(await executor.next('step.exec', (f) => f.runId === runId), 'pass');
      for (const runId of [good1, good2])
        expect((await executor.next('run.finished', (f) => f.runId === runId)).payload.status).to.equal('passed');

      const view = (await p.req('GET', `/otp/runs/${bad}`)).body;
      expect(view.status).to.equal('error');
      expect(view.reason).to.match(/^results could not be recorded: .*test_poison/);
      expect(view.steps.map((s: { status: string }) => s.status)).to.deep.equal(['skip', 'skip']);
      expect(view.steps[0].error.code).to.equal('E_INTERNAL');
      for (const runId of [good1, good2]) {
        const good = (await p.req('GET', `/otp/runs/${runId}`)).body;
        expect(good.status).to.equal('passed');
        expect(good.steps.map((s: { status: string }) => s.status)).to.deep.equal(['pass', 'pass']);
      }
      executor.close();
    } finally {
      await t.service.db.raw('ALTER TABLE otp_run_steps DROP CONSTRAINT test_poison');
    }
  });

  it('finishes a run held by a process that is gone, and one this process no longer drives', async () => {
    const p = await project();
    const ghost = await p.run();
    const dropped = await p.run();
    // No executor claimed them; as if a process had claimed them and vanished without its sweep,
    // or this process had lost the run's driver.
    const claim = (runId: string, instanceId: string) =>
      t.service
        .db('otp_runs')
        .where('id', runId)
        .update({
          status: 'running',
          instance_id: instanceId,
          started_at: t.service.db.raw(`now() - interval '1 minute'`),
        });
    await claim(ghost, 'ins_ghost');
    await claim(dropped, t.service.instanceId);
    const finished = async (runId: string) => {
      const view = (await p.req('GET', `/otp/runs/${runId}`)).body;
      expect(view.status).to.equal('error');
      return view;
    };
    const ghostView = await eventually(() => finished(ghost));
    expect(ghostView.reason).to.equal('the service process that drove this run is gone');
    expect(ghostView.steps.map((s: { status: string }) => s.status)).to.deep.equal(['skip', 'skip']);
    const droppedView = await eventually(() => finished(dropped));
    expect(droppedView.reason).to.equal('no executor session drives this run any more');
  });

  it('leaves alone a run this process drives, however long it runs', async () => {
    const p = await project();
    const executor = await TestExecutor.connect(t.otpUrl, { key: p.key });
    await executor.hello();
    const runId = await p.run();
    const exec = await executor.next('step.exec');
    await t.service
      .db('otp_runs')
      .where('id', runId)
      .update({ started_at: t.service.db.raw(`now() - interval '1 minute'`) });
    // The check finds it among the candidates (this process's, running for a minute) and leaves it.
    expect(await t.service.orphans.check()).to.equal(0);
    expect((await p.req('GET', `/otp/runs/${runId}`)).body.status).to.equal('running');
    executor.result(exec, 'pass');
    executor.result(await executor.next('step.exec'), 'pass');
    expect((await executor.next('run.finished')).payload.status).to.equal('passed');
    executor.close();
  });
});

describe('A run claimed for a session that went away before it started', () => {
  let t: TestService;
  before(async () => {
    // No orphan check: the runs below are claimed by a process that does not exist.
    t = await startTestService({ orphanCheckMs: 0 });
  });
  after(async () => t?.stop());

  it('goes back to the queue, unless it is pinned to a session that closed (or asked to cancel)', async () => {
    const { projectId, tenantId } = await t.newProject('admin');
    const store = new RunStore(t.service.db);
    const session = async () => {
      const id = newId('ots');
      await store.insertSession({
        id,
        tenantId,
        projectId,
        keyId: 'key_x',
        instanceId: 'ins_claimer',
        executor: 'test',
        capabilities: {},
        maxParallel: 4,
      });
      return id;
    };
    const run = (requestedSessionId: string | null) =>
      insertOneStepRun(store, { tenantId, projectId, requestedSessionId });
    const [open, closing] = [await session(), await session()];
    const [free, cancelled, pinnedOpen, pinnedClosed] = [
      await run(null),
      await run(null),
      await run(open),
      await run(closing),
    ];
    const claim = async (sessionId: string, limit: number) =>
      (await store.claimRuns({ id: sessionId, projectId }, 'ins_claimer', limit)).map((r) => r.id);
    expect(await claim(open, 3)).to.deep.equal([free, cancelled, pinnedOpen]);
    expect(await claim(closing, 1)).to.deep.equal([pinnedClosed]);
    await store.requestCancel(cancelled);
    await store.closeSession(closing, 1000, 'gone');

    expect(await store.requeueUnstarted(free, 'ins_other'), 'only the process that claimed it').to.equal(null);
    expect(await store.requeueUnstarted(free, 'ins_claimer')).to.deep.equal({ projectId, sessionId: null });
    expect(await store.requeueUnstarted(pinnedOpen, 'ins_claimer')).to.deep.equal({ projectId, sessionId: open });
    expect(await store.requeueUnstarted(pinnedClosed, 'ins_claimer')).to.equal(null);
    expect(await store.requeueUnstarted(cancelled, 'ins_claimer')).to.equal(null);

    const rows = await t.service
      .db('otp_runs')
      .whereIn('id', [free, cancelled, pinnedOpen, pinnedClosed])
      .orderBy('id')
      .select('id', 'status', 'session_id', 'instance_id', 'started_at');
    expect(rows.map((r) => [r.status, r.session_id, r.instance_id, r.started_at])).to.deep.equal([
      ['queued', null, null, null],
      ['running', open, 'ins_claimer', rows[1].started_at],
      ['queued', null, null, null],
      ['running', closing, 'ins_claimer', rows[3].started_at],
    ]);
    // Back in the queue, it is claimed like any queued run.
    expect(await claim(open, 4)).to.deep.equal([free, pinnedOpen]);
  });
});
