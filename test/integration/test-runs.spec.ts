// Test runs and results recorded by OTP runs (testRunId, finishTestRun), links between artifacts on
// both ends, and the coverage of a requirement.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const navigate = { otp: { action: 'navigate', url: 'https://app.test/' } };
const click = { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Go' } } };
const evalStep = { otp: { action: 'eval', script: 'return 1' } };

describe('Test runs, results from OTP runs, links and coverage', () => {
  let t: TestService;
  before(async () => {
    // A short heartbeat makes the results sweep run often.
    t = await startTestService({ heartbeatMs: 200, otp: { stepGraceMs: 100 } });
  });
  after(async () => t?.stop());

  async function project() {
    const { key, projectId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const make = async (path: string, body: unknown) => {
      const res = await req('POST', path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
      return res.body.id as string;
    };
    const executor = async (capabilities: Record<string, unknown> = {}) => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      await e.hello(capabilities);
      return e;
    };
    const results = async (testRunId: string) =>
      (await req('GET', `/tests/results?testRunId=${testRunId}&limit=200`)).body.items as Array<Record<string, any>>;
    return { key, projectId, req, make, executor, results };
  }

  describe('OTP runs with a testRunId', () => {
    it('records one result per test case when the run finishes, and finishTestRun closes the test run', async () => {
      const p = await project();
      const a = await p.make('/tests/cases', { title: 'A', steps: [navigate, click] });
      const b = await p.make('/tests/cases', { title: 'B', steps: [click] });
      const c = await p.make('/tests/cases', { title: 'C', steps: [evalStep] });
      const testRunId = await p.make('/tests/runs', { title: 'regression', testCaseIds: [a, b, c] });
      expect((await p.req('GET', `/tests/runs/${testRunId}`)).body.summary).to.deep.equal({
        total: 3,
        untested: 3,
        passed: 0,
        failed: 0,
        skipped: 0,
        blocked: 0,
        error: 0,
        cancelled: 0,
        flaky: 0,
      });

      const executor = await p.executor({ eval: false });
      const run = await p.req('POST', '/otp/runs', { testCaseIds: [a, b, c], testRunId, finishTestRun: true });
      expect(run.status).to.equal(202);
      expect(run.body).to.include({ testRunId, finishTestRun: true });
      const start = await executor.next('run.start');
      executor.send('ack', undefined, { runId: start.runId, ref: start.id });
      executor.result(await executor.next('step.exec'), 'pass');
      executor.result(await executor.next('step.exec'), 'pass');
      executor.result(await executor.next('step.exec'), 'fail', {
        error: { code: 'E_LOCATOR_NOT_FOUND', message: 'no Go' },
      });
      expect((await executor.next('run.finished')).payload.status).to.equal('failed');

      const recorded = await eventually(async () => {
        const items = await p.results(testRunId);
        expect(items).to.have.length(3);
        return items;
      });
      const byCase = Object.fromEntries(recorded.map((r) => [r.testCaseId, r]));
      expect(byCase[a]).to.deep.include({
        status: 'passed',
        otpRunId: run.body.runId,
        testRunId,
        stepCounts: { passed: 2, failed: 0, skipped: 0, total: 2 },
      });
      expect(byCase[b]).to.deep.include({
        status: 'failed',
        stepCounts: { passed: 0, failed: 1, skipped: 0, total: 1 },
      });
      // A case whose only step needs a capability the executor lacks is skipped, not failed.
      expect(byCase[c]).to.deep.include({
        status: 'skipped',
        stepCounts: { passed: 0, failed: 0, skipped: 1, total: 1 },
      });
      expect(byCase[a].executedBy).to.equal(`otp:${executor.sessionId}`);

      const testRun = await eventually(async () => {
        const res = await p.req('GET', `/tests/runs/${testRunId}`);
        expect(res.body.status).to.equal('closed');
        return res.body;
      });
      expect(testRun.closedAt).to.be.a('string');
      expect(testRun.summary).to.deep.equal({
        total: 3,
        untested: 0,
        passed: 1,
        failed: 1,
        skipped: 1,
        blocked: 0,
        error: 0,
        cancelled: 0,
        flaky: 0,
      });

      // A closed test run takes no more runs and no more results.
      const again = await p.req('POST', '/otp/runs', { testCaseIds: [a], testRunId });
      expect(again.status).to.equal(409);
      expect(again.body.error.code).to.equal('CONFLICT');
      const manual = await p.req('POST', '/tests/results', { testRunId, testCaseId: a, status: 'passed' });
      expect(manual.status).to.equal(409);

      // Recording again (as the sweep would after a lost hook) adds nothing.
      await t.service.db('otp_runs').where('id', run.body.runId).update({ results_recorded_at: null });
      await eventually(async () => {
        const row = await t.service.db('otp_runs').where('id', run.body.runId).first('results_recorded_at');
        expect(row.results_recorded_at).to.be.instanceOf(Date);
      });
      expect(await p.results(testRunId)).to.have.length(3);
      executor.close();
    });

    it('refuses a testRunId that is unknown, of another project, or given without a run to finish', async () => {
      const p = await project();
      const other = await project();
      const foreignRun = await other.make('/tests/runs', { title: 'theirs' });
      const a = await p.make('/tests/cases', { title: 'A', steps: [click] });
      const before = await t.service.db('otp_runs').count({ n: '*' }).first();
      const unknown = await p.req('POST', '/otp/runs', { testCaseIds: [a], testRunId: 'tr_unknown' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('NOT_FOUND');
      const foreign = await p.req('POST', '/otp/runs', { testCaseIds: [a], testRunId: foreignRun });
      expect(foreign.status).to.equal(404);
      const lonely = await p.req('POST', '/otp/runs', { testCaseIds: [a], finishTestRun: true });
      expect(lonely.status).to.equal(400);
      expect(lonely.body.error.details.fields.map((f: { field: string }) => f.field)).to.deep.equal([
        'body.finishTestRun',
      ]);
      const after = await t.service.db('otp_runs').count({ n: '*' }).first();
      expect(after?.n).to.equal(before?.n);
    });

    it('records cancelled results for a cancelled run and leaves the test run open without finishTestRun', async () => {
      const p = await project();
      const a = await p.make('/tests/cases', { title: 'A', steps: [navigate, click] });
      const b = await p.make('/tests/cases', { title: 'B', steps: [click] });
      const testRunId = await p.make('/tests/runs', { title: 'interrupted' });
      const executor = await p.executor();
      const run = await p.req('POST', '/otp/runs', { testCaseIds: [a, b], testRunId });
      executor.result(await executor.next('step.exec'), 'pass');
      await executor.next('step.exec');
      expect((await p.req('POST', `/otp/runs/${run.body.runId}/cancel`)).body.status).to.equal('cancelled');
      const recorded = await eventually(async () => {
        const items = await p.results(testRunId);
        expect(items).to.have.length(2);
        return items;
      });
      expect(recorded.map((r) => [r.testCaseId, r.status]).sort()).to.deep.equal(
        [
          [a, 'cancelled'],
          [b, 'cancelled'],
        ].sort(),
      );
      const testRun = (await p.req('GET', `/tests/runs/${testRunId}`)).body;
      expect(testRun.status).to.equal('open');
      expect(testRun.summary).to.include({ total: 2, cancelled: 2, untested: 0 });
      executor.close();
    });

    it('records error results for a run finished without its hook (orphaned when its session closed)', async () => {
      const p = await project();
      const a = await p.make('/tests/cases', { title: 'A', steps: [click] });
      const testRunId = await p.make('/tests/runs', { title: 'orphans' });
      const executor = await p.executor({ maxParallel: 1 });
      // The first run keeps the session busy, so the second waits for it, queued.
      await p.req('POST', '/otp/runs', { testCaseIds: [a], sessionId: executor.sessionId });
      await executor.next('step.exec');
      const queued = await p.req('POST', '/otp/runs', { testCaseIds: [a], sessionId: executor.sessionId, testRunId });
      expect(queued.body.status).to.equal('queued');
      executor.close();
      const recorded = await eventually(async () => {
        const items = await p.results(testRunId);
        expect(items).to.have.length(1);
        return items;
      });
      expect(recorded[0]).to.include({ testCaseId: a, status: 'error', otpRunId: queued.body.runId });
      expect((await p.req('GET', `/otp/runs/${queued.body.runId}`)).body.status).to.equal('error');
    });

    it('keeps the history of a test case across runs, newest first on request', async () => {
      const p = await project();
      const a = await p.make('/tests/cases', { title: 'A', steps: [] });
      const first = await p.make('/tests/runs', { title: 'week 1' });
      const second = await p.make('/tests/runs', { title: 'week 2' });
      const r1 = await p.make('/tests/results', { testRunId: first, testCaseId: a, status: 'failed' });
      const r2 = await p.make('/tests/results', { testRunId: second, testCaseId: a, status: 'passed' });
      const history = await p.req('GET', `/tests/results?testCaseId=${a}&sort=-createdAt`);
      expect(history.body.items.map((r: { id: string }) => r.id)).to.deep.equal([r2, r1]);
      // A result's run and case are fixed once written.
      const moved = await p.req('PATCH', `/tests/results/${r1}`, { testRunId: second });
      expect(moved.status).to.equal(400);
      expect(moved.body.error.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['body.testRunId']);
      // Deleting a test run deletes its results.
      expect((await p.req('DELETE', `/tests/runs/${first}`)).status).to.equal(204);
      expect((await p.req('GET', `/tests/results/${r1}`)).status).to.equal(404);
      expect((await p.req('GET', `/tests/results/${r2}`)).status).to.equal(200);
    });
  });

  describe('links and coverage', () => {
    it('links requirement, specification, test case, result, bug and release, listed on both ends', async () => {
      const p = await project();
      const req = await p.make('/requirements', { title: 'Users can sign in' });
      const spec = await p.make('/specifications', { title: 'Sign-in flow' });
      const tc = await p.make('/tests/cases', { title: 'Sign in', steps: [] });
      const testRun = await p.make('/tests/runs', { title: 'r' });
      const result = await p.make('/tests/results', { testRunId: testRun, testCaseId: tc, status: 'failed' });
      const bug = await p.make('/bugs', { title: 'Sign in broken' });
      const release = await p.make('/releases', { name: '1.0.0' });

      const specifies = await p.req('POST', `/specifications/${spec}/links`, { targetId: req, relation: 'specifies' });
      expect(specifies.status).to.equal(201);
      expect(specifies.body).to.deep.include({ relation: 'specifies', direction: 'outgoing', reads: 'specifies' });
      expect(specifies.body.artifact).to.deep.equal({ id: req, kind: 'requirement', title: 'Users can sign in' });
      // From the requirement's end, a test case covering it is an incoming link.
      const covers = await p.req('POST', `/requirements/${req}/links`, {
        targetId: tc,
        relation: 'covers',
        direction: 'incoming',
      });
      expect(covers.body).to.deep.include({ relation: 'covers', direction: 'incoming', reads: 'covered_by' });
      expect((await p.req('POST', `/bugs/${bug}/links`, { targetId: result, relation: 'found_by' })).status).to.equal(
        201,
      );
      expect((await p.req('POST', `/bugs/${bug}/links`, { targetId: release, relation: 'fixed_in' })).status).to.equal(
        201,
      );

      const ofRequirement = (await p.req('GET', `/requirements/${req}/links`)).body.items;
      expect(ofRequirement.map((l: any) => [l.artifact.id, l.reads]).sort()).to.deep.equal(
        [
          [spec, 'specified_by'],
          [tc, 'covered_by'],
        ].sort(),
      );
      const ofCase = (await p.req('GET', `/tests/cases/${tc}/links`)).body.items;
      expect(ofCase.map((l: any) => [l.artifact.id, l.direction, l.relation])).to.deep.equal([
        [req, 'outgoing', 'covers'],
      ]);
      const ofResult = (await p.req('GET', `/tests/results/${result}/links`)).body.items;
      expect(ofResult.map((l: any) => [l.artifact.id, l.reads])).to.deep.equal([[bug, 'found']]);
      const ofRelease = (await p.req('GET', `/releases/${release}/links?direction=incoming`)).body.items;
      expect(ofRelease.map((l: any) => [l.artifact.id, l.reads])).to.deep.equal([[bug, 'fixes']]);
      const ofBug = (await p.req('GET', `/bugs/${bug}/links?relation=fixed_in`)).body.items;
      expect(ofBug.map((l: any) => l.artifact.id)).to.deep.equal([release]);

      // Removing a link from either end removes it from both.
      const removed = await p.req('DELETE', `/tests/cases/${tc}/links/${covers.body.id}`);
      expect(removed.status).to.equal(204);
      expect((await p.req('GET', `/requirements/${req}/links?relation=covers`)).body.items).to.deep.equal([]);
      expect((await p.req('DELETE', `/tests/cases/${tc}/links/${covers.body.id}`)).status).to.equal(404);
    });

    it('refuses links that make no sense, naming the field', async () => {
      const p = await project();
      const other = await project();
      const req = await p.make('/requirements', { title: 'R' });
      const tc = await p.make('/tests/cases', { title: 'T', steps: [] });
      const foreign = await other.make('/requirements', { title: 'theirs' });
      const hook = await p.make('/webhooks', { url: 'https://hooks.test/x', events: ['*'] });
      const cases: Array<[unknown, string, number]> = [
        [{ targetId: tc, relation: 'covers' }, 'body.relation', 400], // a requirement covers nothing
        [{ targetId: req }, 'body.targetId', 400], // itself
        [{ targetId: 'req_nothing' }, 'body.targetId', 400],
        [{ targetId: foreign }, 'body.targetId', 400], // another project's
        [{ targetId: hook }, 'body.targetId', 400], // webhooks take no links
        [{ targetId: tc, relation: 'loves' }, 'body.relation', 400],
      ];
      for (const [body, field, status] of cases) {
        const res = await p.req('POST', `/requirements/${req}/links`, body);
        expect(res.status, JSON.stringify(body)).to.equal(status);
        expect(
          res.body.error.details.fields.map((f: { field: string }) => f.field),
          JSON.stringify(body),
        ).to.include(field);
      }
      expect((await p.req('POST', `/requirements/${req}/links`, { targetId: tc })).status).to.equal(201);
      const duplicate = await p.req('POST', `/requirements/${req}/links`, { targetId: tc });
      expect(duplicate.status).to.equal(409);
      // Links of another project's artifact are not found.
      expect((await other.req('GET', `/requirements/${req}/links`)).status).to.equal(404);
      expect((await other.req('POST', `/requirements/${foreign}/links`, { targetId: req })).status).to.equal(400);
    });

    it('answers coverage: covering cases, directly or through specifications, with their latest results', async () => {
      const p = await project();
      const req = await p.make('/requirements', { title: 'Export to CSV' });
      const spec = await p.make('/specifications', { title: 'CSV format' });
      const direct = await p.make('/tests/cases', { title: 'exports', steps: [] });
      const viaSpec = await p.make('/tests/cases', { title: 'quotes fields', steps: [] });
      await p.req('POST', `/specifications/${spec}/links`, { targetId: req, relation: 'specifies' });
      await p.req('POST', `/tests/cases/${direct}/links`, { targetId: req, relation: 'covers' });
      await p.req('POST', `/tests/cases/${viaSpec}/links`, { targetId: spec, relation: 'covers' });

      const uncovered = await p.make('/requirements', { title: 'Nobody tests me' });
      const none = await p.req('GET', `/requirements/${uncovered}/coverage`);
      expect(none.body).to.deep.include({ covered: false, testCases: [] });

      const before = (await p.req('GET', `/requirements/${req}/coverage`)).body;
      expect(before.covered).to.equal(true);
      expect(before.testCases.map((c: any) => [c.id, c.via, c.latestResult])).to.deep.equal([
        [direct, [req], null],
        [viaSpec, [spec], null],
      ]);
      expect(before.summary).to.include({ testCases: 2, untested: 2 });

      const testRun = await p.make('/tests/runs', { title: 'r' });
      await p.make('/tests/results', { testRunId: testRun, testCaseId: direct, status: 'failed' });
      const latest = await p.make('/tests/results', { testRunId: testRun, testCaseId: direct, status: 'passed' });
      const after = (await p.req('GET', `/requirements/${req}/coverage`)).body;
      expect(after.testCases[0].latestResult).to.include({ id: latest, status: 'passed', testRunId: testRun });
      expect(after.summary).to.include({ testCases: 2, passed: 1, failed: 0, untested: 1 });
      const ofSpec = (await p.req('GET', `/specifications/${spec}/coverage`)).body;
      expect(ofSpec.testCases.map((c: any) => c.id)).to.deep.equal([viaSpec]);

      const other = await project();
      expect((await other.req('GET', `/requirements/${req}/coverage`)).status).to.equal(404);
    });

    it('deleting an artifact removes its links and the references to it', async () => {
      const p = await project();
      const req = await p.make('/requirements', { title: 'R' });
      const a = await p.make('/tests/cases', { title: 'A', steps: [] });
      const b = await p.make('/tests/cases', { title: 'B', steps: [] });
      const plan = await p.make('/tests/plans', { title: 'plan', testCaseIds: [a, b] });
      const release = await p.make('/releases', { name: '2.0.0' });
      const testRun = await p.make('/tests/runs', { title: 'r', releaseId: release, testCaseIds: [a] });
      await p.req('POST', `/tests/cases/${a}/links`, { targetId: req, relation: 'covers' });
      expect((await p.req('DELETE', `/tests/cases/${a}`)).status).to.equal(204);
      expect((await p.req('GET', `/requirements/${req}/links`)).body.items).to.deep.equal([]);
      const planAfter = (await p.req('GET', `/tests/plans/${plan}`)).body;
      expect(planAfter).to.deep.include({ testCaseIds: [b], version: 2 });
      expect((await p.req('DELETE', `/releases/${release}`)).status).to.equal(204);
      const runAfter = (await p.req('GET', `/tests/runs/${testRun}`)).body;
      expect(runAfter).not.to.have.property('releaseId');
      expect(runAfter.testCaseIds).to.deep.equal([]);
    });
  });
});
