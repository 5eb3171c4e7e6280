import { expect } from 'chai';
import { type Frame, TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const locator = { by: 'testid', value: 'go' };

describe('ai: flakiness from history, quarantine and the verdict, the quota', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100, resumeWindowMs: 0 }, limits: { aiCallsPerMonth: 3 } });
  });
  after(async () => t?.stop());

  async function project() {
    const { key, tenantId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ maxParallel: 1 });
    /** Runs the cases to the end, answering each step with the status `outcome` decides. */
    const run = async (testCaseIds: string[], outcome: (exec: Frame) => 'pass' | 'fail') => {
      const created = await req('POST', '/otp/runs', { testCaseIds });
      expect(created.status).to.equal(202);
      const start = await executor.next('run.start');
      executor.send('ack', undefined, { runId: start.runId, ref: start.id });
      let finished: Frame;
      for (;;) {
        const frame = await Promise.race([
          executor.next('step.exec', (f) => f.runId === start.runId),
          executor.next('run.finished', (f) => f.runId === start.runId),
        ]);
        if (frame.type === 'run.finished') {
          finished = frame;
          break;
        }
        executor.result(frame, outcome(frame));
      }
      return { ...(await req('GET', `/otp/runs/${created.body.runId}`)).body, finishedFrame: finished.payload };
    };
    return { key, tenantId, req, executor, run };
  }

  it('flags a case whose outcome flips, calls one that nearly always fails broken, and a quarantined case does not fail the verdict', async () => {
    const p = await project();
    const flaky = (
      await p.req('POST', '/tests/cases', { title: 'flaky', steps: [{ otp: { action: 'click', locator } }] })
    ).body.id;
    const broken = (
      await p.req('POST', '/tests/cases', { title: 'broken', steps: [{ otp: { action: 'click', locator } }] })
    ).body.id;
    const steady = (
      await p.req('POST', '/tests/cases', { title: 'steady', steps: [{ otp: { action: 'click', locator } }] })
    ).body.id;
    // 10 runs: flaky alternates, broken fails every time, steady passes.
    for (let i = 0; i < 10; i += 1) {
      await p.run([flaky, broken, steady], (exec) => {
        const caseIndex = exec.payload.stepIndex;
        if (caseIndex === 0) return i % 2 ? 'fail' : 'pass';
        return caseIndex === 1 ? 'fail' : 'pass';
      });
    }
    const answer = await p.req('GET', '/ai/flaky?runs=50');
    expect(answer.status).to.equal(200);
    const byId = new Map(answer.body.items.map((c: { testCaseId: string }) => [c.testCaseId, c]));
    const f = byId.get(flaky) as any;
    expect(f.status).to.equal('flaky');
    expect(f.runs).to.equal(10);
    expect(f.flips).to.equal(9);
    expect(f.reasons[0]).to.match(/flipped 9 times in 9 consecutive runs/);
    expect(f.evidenceRuns.length).to.be.greaterThan(0);
    expect((byId.get(broken) as any).status).to.equal('broken');
    expect((byId.get(steady) as any).status).to.equal('stable');
    expect(answer.body.items[0].testCaseId).to.equal(flaky);

    // Quarantine both failing cases: the run passes, and says why.
    const q = await p.req('POST', `/ai/flaky/${flaky}/quarantine`, { days: 2, reason: 'flips' });
    expect(q.status).to.equal(200);
    expect(q.body).to.include({ testCaseId: flaky, reason: 'flips', renewed: false });
    expect(Date.parse(q.body.expiresAt) - Date.parse(q.body.createdAt)).to.be.within(
      2 * 86400_000 - 5000,
      2 * 86400_000 + 5000,
    );
    const renewed = await p.req('POST', `/ai/flaky/${flaky}/quarantine`, {});
    expect(renewed.body.renewed).to.equal(true);
    expect(renewed.body.reason).to.equal('flips');
    await p.req('POST', `/ai/flaky/${broken}/quarantine`, { reason: 'known' });
    expect((await p.req('POST', '/ai/flaky/tc_unknown/quarantine', {})).status).to.equal(404);

    const quarantined = await p.run([flaky, broken, steady], (exec) =>
      exec.payload.stepIndex === 2 ? 'pass' : 'fail',
    );
    expect(quarantined.status).to.equal('passed');
    expect(quarantined.counts.failed).to.equal(2);
    expect(quarantined.testCases.map((c: { quarantined?: boolean }) => c.quarantined ?? false)).to.deep.equal([
      true,
      true,
      false,
    ]);
    expect(quarantined.finishedFrame).to.include({ status: 'passed', failed: 2 });
    expect(quarantined.finishedFrame.quarantined).to.deep.equal([flaky, broken]);
    // A failure outside the quarantine still fails it.
    const failing = await p.run([flaky, steady], (exec) => (exec.payload.stepIndex === 1 ? 'fail' : 'pass'));
    expect(failing.status).to.equal('failed');
    expect(failing.finishedFrame).to.include({ status: 'failed' });
    const junit = await fetch(`${t.api}/otp/runs/${quarantined.id}?format=junit`, {
      headers: { authorization: `Bearer ${p.key}` },
    });
    expect(junit.status).to.equal(200);
    const xml = await junit.text();
    expect(xml).to.include('<property name="status" value="passed"/>');
    expect(xml.match(/<property name="quarantined" value="true"\/>/g)).to.have.length(2);
    expect(xml).to.include('quarantined (does not fail the run)');

    // Undone: the next run fails again.
    expect((await p.req('DELETE', `/ai/flaky/${flaky}/quarantine`)).status).to.equal(200);
    expect((await p.req('DELETE', `/ai/flaky/${flaky}/quarantine`)).status).to.equal(404);
    const after = await p.run([flaky], () => 'fail');
    expect(after.status).to.equal('failed');
    expect(after.finishedFrame).to.not.have.property('quarantined');
    expect(after.testCases[0]).to.not.have.property('quarantined');
  });

  it('lets a quarantine expire unless renewed: an expired one marks no run and shows nowhere', async () => {
    const p = await project();
    const testCase = (
      await p.req('POST', '/tests/cases', { title: 'expiring', steps: [{ otp: { action: 'click', locator } }] })
    ).body.id;
    await p.req('POST', `/ai/flaky/${testCase}/quarantine`, { days: 1 });
    expect((await p.run([testCase], () => 'fail')).status).to.equal('passed');
    // A day later (the term moved into the past, as time would).
    await t.service
      .db('ai_quarantines')
      .where({ test_case_id: testCase })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await p.run([testCase], () => 'fail');
    expect(expired.status).to.equal('failed');
    expect(expired.testCases[0]).to.not.have.property('quarantined');
    expect((await p.req('GET', `/ai/flaky?testCaseId=${testCase}`)).body.items[0].quarantine).to.equal(null);
    // Taken up again, it is a new quarantine with a new term.
    const again = await p.req('POST', `/ai/flaky/${testCase}/quarantine`, { days: 3 });
    expect(Date.parse(again.body.expiresAt)).to.be.greaterThan(Date.now() + 2 * 86400_000);
    expect((await p.run([testCase], () => 'fail')).status).to.equal('passed');
  });

  it('charges each history answer against the monthly allowance and answers 402 ai_quota_exceeded past it, writing nothing', async () => {
    const p = await project();
    for (let i = 0; i < 3; i += 1) expect((await p.req('GET', '/ai/healing')).status).to.equal(200);
    const usage = await p.req('GET', '/ai/usage');
    expect(usage.body).to.include({ tier: 'free', allowance: 3, used: 3, remaining: 0 });
    expect(usage.body.byOperation).to.deep.equal({ healing: 3 });
    const refused = await p.req('GET', '/ai/flaky');
    expect(refused.status).to.equal(402);
    expect(refused.body.error.code).to.equal('ai_quota_exceeded');
    expect(refused.body.upgradeUrl).to.be.a('string');
    expect(refused.body.error.details.renewsAt).to.equal(usage.body.renewsAt);
    expect((await p.req('GET', '/ai/usage')).body.used).to.equal(3);
    // Another tenant has its own allowance.
    const other = await project();
    expect((await other.req('GET', '/ai/flaky')).status).to.equal(200);
  });

  it('answers 503 ai_not_configured for a draft when no model is configured, and charges nothing', async () => {
    const p = await project();
    const refused = await p.req('POST', '/ai/test-cases/draft', { requirementId: 'req_x' });
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('ai_not_configured');
    expect((await p.req('GET', '/ai/usage')).body.used).to.equal(0);
  });

  it('lists every ai route in /openapi.json under the tag ai', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const aiPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/v1/ai/'));
    expect(aiPaths).to.include.members([
      '/api/v1/ai/flaky',
      '/api/v1/ai/flaky/{testCaseId}/quarantine',
      '/api/v1/ai/healing',
      '/api/v1/ai/healing/{id}/accept',
      '/api/v1/ai/healing/{id}/reject',
      '/api/v1/ai/usage',
      '/api/v1/ai/test-cases/draft',
    ]);
    for (const path of aiPaths)
      for (const op of Object.values(doc.paths[path]) as Array<{ tags: string[] }>)
        expect(op.tags).to.deep.equal(['ai']);
  });
});
