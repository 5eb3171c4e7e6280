// Triage on what a person and the page say (issue 38): bugs filed by hand through POST /bugs and
// linked to a test result that failed the same way or to the test case are known issues; a fixed bug
// whose failure comes back is a regression of it; a navigation that got a 503 is the environment; a
// case that passed on a retry is flaky, never a regression. Real service, PostgreSQL and WebSocket.
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

const openShop = { otp: { action: 'navigate', url: 'http://shop.test/shop' } };
const checkTotal = {
  otp: {
    action: 'assert',
    kind: 'text',
    locator: { by: 'testid', value: 'total' },
    op: 'equals',
    expected: 'Total: 42',
  },
};
const checkTitle = { otp: { action: 'assert', kind: 'title', op: 'equals', expected: 'Shop' } };

type Outcome = 'pass' | ['pass' | 'fail' | 'error', Record<string, unknown>];
const totalWrong = (n: number): Outcome => [
  'fail',
  {
    error: { code: 'E_ASSERT_FAILED', message: `expected text to equal "Total: 42", got "Total: ${n}"` },
    actual: `Total: ${n}`,
    usedLocator: { by: 'testid', value: 'total' },
  },
];
const unavailable: Outcome[] = [
  [
    'pass',
    { evidence: { navigations: [{ url: 'http://shop.test/shop', status: 503, statusText: 'Service Unavailable' }] } },
  ],
  [
    'fail',
    {
      error: { code: 'E_ASSERT_FAILED', message: 'expected title to equal "Shop", got "Shop is resting"' },
      actual: 'Shop is resting',
    },
  ],
];

describe('ai: triage from links people make, error pages and retries', function () {
  this.timeout(60_000);
  let t: TestService;
  before(async () => {
    t = await startTestService({ heartbeatMs: 200, otp: { stepGraceMs: 100 } });
  });
  after(() => t?.stop());

  async function project() {
    const { key } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      t.request(method, path, { key, body, headers });
    const make = async (path: string, body: unknown) => {
      const res = await req('POST', path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
      return res.body.id as string;
    };
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello();
    const testRunId = await make('/tests/runs', { title: 'Nightly' });
    /** Runs the cases (recording their results in the test run); each step answers its case's next outcome. */
    const run = async (caseIds: string[], outcomes: Record<string, Outcome[]>, retries = 0) => {
      const started = await req('POST', '/otp/runs', { testCaseIds: caseIds, testRunId, retries });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      const runId = started.body.id as string;
      const start = await executor.next('run.start', (f) => f.runId === runId);
      const caseOf: string[] = (start.payload.testCases as Array<{ id: string; steps: number }>).flatMap((c) =>
        Array<string>(c.steps).fill(c.id),
      );
      const queues = Object.fromEntries(Object.entries(outcomes).map(([id, list]) => [id, [...list]]));
      for (;;) {
        const frame = await Promise.race([
          executor.next('step.exec', (f) => f.runId === runId),
          executor.next('run.finished', (f) => f.runId === runId),
        ]);
        if (frame.type === 'run.finished') break;
        const next = queues[caseOf[frame.payload.stepIndex as number]!]?.shift() ?? 'pass';
        if (next === 'pass') executor.result(frame, 'pass');
        else executor.result(frame, next[0], next[1]);
      }
      // Signed (after the verdict) and its results recorded, before anyone triages or links to them.
      await eventually(async () => {
        const results = await req('GET', `/tests/results?otpRunId=${runId}`);
        expect(results.body.items).to.have.length(caseIds.length);
        const outcomes = await t.service.db.raw('SELECT count(*)::int AS n FROM ai_case_outcomes WHERE run_id = ?', [
          runId,
        ]);
        expect(outcomes.rows[0].n).to.equal(caseIds.length);
      }, 10_000);
      return runId;
    };
    const triage = async (runId: string) => {
      const res = await req('POST', `/ai/runs/${runId}/triage`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return Object.fromEntries((res.body.cases as any[]).map((c) => [c.testCaseId, c]));
    };
    const resultOf = async (runId: string, testCaseId: string) =>
      (await req('GET', `/tests/results?otpRunId=${runId}&testCaseId=${testCaseId}`)).body.items[0].id as string;
    const link = async (bugId: string, targetId: string, relation = 'found_by') => {
      const res = await req('POST', `/bugs/${bugId}/links`, { targetId, relation });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    };
    return { req, make, run, triage, resultOf, link, executor };
  }

  it('finds a bug filed by hand and linked to an earlier result of the same failure, or to the test case', async () => {
    const p = await project();
    const checkout = await p.make('/tests/cases', { title: 'Checkout', steps: [openShop, checkTotal] });
    const cart = await p.make('/tests/cases', { title: 'Cart', steps: [openShop, checkTotal] });
    const first = await p.run([checkout, cart], { [checkout]: ['pass', totalWrong(40)] });
    expect((await p.triage(first))[checkout].category).to.equal('product_regression');
    // A person files the bug through POST /bugs and links it to that night's failing result.
    const bugId = await p.make('/bugs', { title: 'Checkout total off by two' });
    await p.link(bugId, await p.resultOf(first, checkout));
    const second = await p.run([checkout, cart], { [checkout]: ['pass', totalWrong(38)] });
    const known = (await p.triage(second))[checkout];
    expect(known).to.include({ category: 'known_issue', suggestedAction: 'follow_bug' });
    expect(known.reasons[0]).to.contain(bugId).and.contain('found_by test result').and.contain(first);
    expect(known.bugs).to.deep.equal([
      {
        id: bugId,
        title: 'Checkout total off by two',
        status: 'open',
        via: 'result',
        how: known.bugs[0].how,
      },
    ]);
    // A bug linked to the test case alone (relates_to, from the case's side of the link too).
    const cartBug = await p.make('/bugs', { title: 'Cart total flickers' });
    const linked = await p.req('POST', `/tests/cases/${cart}/links`, {
      targetId: cartBug,
      relation: 'relates_to',
    });
    expect(linked.status, JSON.stringify(linked.body)).to.equal(201);
    const third = await p.run([checkout, cart], {
      [checkout]: ['pass', totalWrong(38)],
      [cart]: ['pass', totalWrong(1)],
    });
    const answers = await p.triage(third);
    expect(answers[cart]).to.include({ category: 'known_issue' });
    expect(answers[cart].reasons[0]).to.contain(cartBug).and.contain(`relates_to test case ${cart}`);
    expect(answers[cart].bugs[0].via).to.equal('case');

    // Fixed: the same failure back is a regression of the fixed bug, and says so.
    const current = await p.req('GET', `/bugs/${bugId}`);
    const fixed = await p.req(
      'PATCH',
      `/bugs/${bugId}`,
      { status: 'resolved' },
      { 'if-match': current.headers.get('etag')! },
    );
    expect(fixed.status, JSON.stringify(fixed.body)).to.equal(200);
    const back = (await p.triage(third))[checkout];
    expect(back).to.include({ category: 'product_regression', suggestedAction: 'reopen_bug' });
    expect(back.reasons.join(' ')).to.contain('regression of a fixed bug').and.contain(bugId);
  });

  it('calls a navigation answered 503 the environment, quoting it', async () => {
    const p = await project();
    const shop = await p.make('/tests/cases', { title: 'Shop title', steps: [openShop, checkTitle] });
    const runId = await p.run([shop], { [shop]: unavailable });
    const answer = (await p.triage(runId))[shop];
    expect(answer).to.include({ category: 'environment', suggestedAction: 're_run' });
    expect(answer.reasons[0]).to.equal(
      "the page http://shop.test/shop answered HTTP 503 Service Unavailable (the main document's status)",
    );
    // That night says nothing of the case: a regression after it is not read as a flaky case.
    await p.run([shop], {});
    const titleWrong: Outcome = [
      'fail',
      {
        error: { code: 'E_ASSERT_FAILED', message: 'expected title to equal "Shop", got "Shop (closed)"' },
        actual: 'Shop (closed)',
      },
    ];
    const regression = await p.run([shop], { [shop]: ['pass', titleWrong] });
    expect((await p.triage(regression))[shop].category).to.equal('product_regression');
    // The navigation's evidence is kept with the step, as the executor sent it.
    const run = await p.req('GET', `/otp/runs/${runId}`);
    expect(run.body.steps[0].evidence.navigations).to.deep.equal([
      { url: 'http://shop.test/shop', status: 503, statusText: 'Service Unavailable' },
    ]);
  });

  it('refuses a navigation report the database could not keep with an error frame, and takes the next result', async () => {
    const p = await project();
    const shop = await p.make('/tests/cases', { title: 'Shop', steps: [openShop] });
    const started = await p.req('POST', '/otp/runs', { testCaseIds: [shop] });
    const exec = await p.executor.next('step.exec', (f) => f.runId === started.body.id);
    const badId = p.executor.result(exec, 'pass', {
      evidence: { navigations: [{ url: 'http://shop.test/\u0000', status: 200 }] },
    });
    const refused = await p.executor.next('error', (f) => f.ref === badId);
    expect(refused.payload.code).to.equal('E_INVALID_FRAME');
    expect(refused.payload.details.fields.map((f: any) => f.field)).to.deep.equal([
      'payload.evidence.navigations[0].url',
    ]);
    const tooMany = p.executor.result(exec, 'pass', { evidence: { navigations: [{ status: 200 }] } });
    expect((await p.executor.next('error', (f) => f.ref === tooMany)).payload.code).to.equal('E_INVALID_FRAME');
    p.executor.result(exec, 'pass', { evidence: { navigations: [{ url: 'http://shop.test/shop', status: 200 }] } });
    expect((await p.executor.next('run.finished', (f) => f.runId === started.body.id)).payload.status).to.equal(
      'passed',
    );
  });

  it('calls a case that passed on a retry flaky, never a regression', async () => {
    const p = await project();
    const search = await p.make('/tests/cases', { title: 'Search', steps: [openShop, checkTotal] });
    await p.run([search], {});
    // Fails, then passes on its retry: flaky, and the run passes.
    await p.run([search], { [search]: ['pass', totalWrong(3), 'pass', 'pass'] }, 1);
    await p.run([search], {});
    const runId = await p.run([search], { [search]: ['pass', totalWrong(4)] });
    const answer = (await p.triage(runId))[search];
    expect(answer).to.include({ category: 'flaky', suggestedAction: 'quarantine' });
    expect(answer.reasons[0]).to.contain('passed on a retry in 1 of its last 3 earlier runs');
  });
});
