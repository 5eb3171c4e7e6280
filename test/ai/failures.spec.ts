// Failure clusters, triage, corrections and rules, bug drafts and the new-cluster webhook, over a
// real service, a real PostgreSQL and a test executor on a real WebSocket.
import { expect } from 'chai';
import { call, mcpClient } from '../agents/mcp-client.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const openShop = { otp: { action: 'navigate', url: '{{base}}/shop' } };
const checkTotal = {
  otp: {
    action: 'assert',
    kind: 'text',
    locator: { by: 'testid', value: 'total' },
    op: 'equals',
    expected: 'Total: 42',
  },
};
const clickPay = {
  otp: {
    action: 'click',
    locator: {
      candidates: [
        { by: 'testid', value: 'pay' },
        { by: 'role', value: 'button', name: 'Pay' },
      ],
    },
  },
};

type Outcome = 'pass' | ['fail' | 'error', Record<string, unknown>];
const totalWrong = (n: number): Outcome => [
  'fail',
  {
    error: { code: 'E_ASSERT_FAILED', message: `expected text to equal "Total: 42", got "Total: ${n}"` },
    actual: `Total: ${n}`,
    usedLocator: { by: 'testid', value: 'total' },
  },
];
const payDrifted: Outcome = [
  'fail',
  {
    error: {
      code: 'E_LOCATOR_NOT_FOUND',
      message: 'no element matched testid "pay"',
      triedLocators: [
        { by: 'testid', value: 'pay', count: 0 },
        { by: 'role', value: 'button', name: 'Pay', count: 1 },
      ],
    },
  },
];
const shopDown: Outcome = [
  'error',
  { error: { code: 'E_INTERNAL', message: 'page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:39999/shop' } },
];

describe('ai: failure clusters, triage and bug drafts', function () {
  this.timeout(60_000);
  let t: TestService;
  let hooks: WebhookReceiver;
  before(async () => {
    t = await startTestService({
      heartbeatMs: 200,
      otp: { stepGraceMs: 100 },
      webhooks: { retryScheduleMs: [100], attemptTimeoutMs: 10_000, pollMs: 200 },
    });
    hooks = await WebhookReceiver.start();
  });
  after(async () => {
    await hooks?.close();
    await t?.stop();
  });

  async function project() {
    const { key, projectId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const make = async (path: string, body: unknown) => {
      const res = await req('POST', path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
      return res.body.id as string;
    };
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello();
    /** Runs the cases; each step answers the next outcome of its case (pass when none is left). */
    const run = async (caseIds: string[], outcomes: Record<string, Outcome[]>) => {
      const started = await req('POST', '/otp/runs', {
        testCaseIds: caseIds,
        vars: { base: 'http://shop.test', secret_password: 'hunter2' },
      });
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
        const testCaseId = caseOf[frame.payload.stepIndex as number]!;
        const next = queues[testCaseId]?.shift() ?? 'pass';
        if (next === 'pass') executor.result(frame, 'pass');
        else executor.result(frame, next[0], next[1]);
      }
      return runId;
    };
    const clusters = async (query = '') => {
      const res = await req('GET', `/ai/failures${query}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as { items: any[]; nextCursor: string | null };
    };
    /** Waits until the scan has signed the run's failures (it runs after the verdict, off the step path). */
    const signed = (count: number, query = '') =>
      eventually(async () => {
        const page = await clusters(`${query}${query ? '&' : '?'}limit=200`);
        const total = page.items.reduce((n, c) => n + c.count, 0);
        expect(total).to.equal(count);
        return page;
      }, 10_000);
    const triage = async (runId: string) => {
      const res = await req('POST', `/ai/runs/${runId}/triage`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body as { runId: string; cases: any[] };
    };
    return { key, projectId, req, make, executor, run, clusters, signed, triage };
  }

  it('groups the same cause across runs and cases, newest first, with counts, an example and paging', async () => {
    const p = await project();
    const checkout = await p.make('/tests/cases', { title: 'Checkout', steps: [openShop, checkTotal, clickPay] });
    const cart = await p.make('/tests/cases', { title: 'Cart', steps: [openShop, checkTotal] });
    await p.run([checkout, cart], {});
    const first = await p.run([checkout, cart], {
      [checkout]: ['pass', totalWrong(40)],
      [cart]: ['pass', totalWrong(39)],
    });
    await p.signed(2);
    const second = await p.run([checkout], { [checkout]: ['pass', 'pass', payDrifted] });
    const page = await p.signed(3);
    expect(page.items.map((c) => c.code)).to.deep.equal(['E_LOCATOR_NOT_FOUND', 'E_ASSERT_FAILED']);
    const [pay, total] = page.items;
    expect(total).to.include({
      code: 'E_ASSERT_FAILED',
      action: 'assert:text',
      locator: 'testid=total',
      message: 'expected text to equal "<v>", got "<v>"',
      status: 'new',
      count: 2,
      runs: 1,
      cases: 2,
    });
    expect(total.signature).to.match(/^sig_[0-9a-f]{20}$/);
    expect(total.example).to.include({ runId: first, screenshotUrl: null });
    expect([checkout, cart]).to.include(total.example.testCaseId);
    expect(pay).to.include({ locator: 'testid=pay', count: 1, runs: 1, cases: 1 });
    expect(pay.example).to.include({ runId: second, stepIndex: 2, testCaseId: checkout });
    expect(pay.bugs).to.deep.equal([]);

    // Filters: a test case, a plan, a window, new against recurring.
    expect((await p.clusters(`?testCaseId=${cart}`)).items.map((c) => c.signature)).to.deep.equal([total.signature]);
    expect((await p.clusters(`?testCaseId=${cart}`)).items[0]).to.include({ count: 1, cases: 1 });
    expect((await p.clusters('?planId=tp_none')).items).to.deep.equal([]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(
      (
        await p.clusters(
          `?since=${encodeURIComponent(later)}&until=${encodeURIComponent(new Date(Date.now() + 120_000).toISOString())}`,
        )
      ).items,
    ).to.deep.equal([]);
    expect((await p.clusters('?status=recurring')).items).to.deep.equal([]);
    // Paging: one at a time, in the same order, the cursor running out.
    const one = await p.clusters('?limit=1');
    expect(one.items.map((c) => c.signature)).to.deep.equal([pay.signature]);
    const two = await p.clusters(`?limit=1&cursor=${one.nextCursor}`);
    expect(two.items.map((c) => c.signature)).to.deep.equal([total.signature]);
    expect(two.nextCursor).to.equal(null);
    // Bad input is named.
    const bad = await p.req('GET', '/ai/failures?cursor=nonsense');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details.fields[0].field).to.equal('query.cursor');
    const empty = await p.req(
      'GET',
      `/ai/failures?since=${encodeURIComponent(later)}&until=${encodeURIComponent(later)}`,
    );
    expect(empty.status).to.equal(400);
    // Another project sees none of it.
    const other = await t.newProject('read');
    const theirs = await t.request('GET', '/ai/failures', { key: other.key });
    expect(theirs.body.items).to.deep.equal([]);
    expect((await t.request('POST', `/ai/runs/${first}/triage`, { key: other.key })).status).to.equal(404);
  });

  it('triages each failed case from its facts and history, and says why', async () => {
    const p = await project();
    const checkout = await p.make('/tests/cases', { title: 'Checkout', steps: [openShop, checkTotal, clickPay] });
    const cart = await p.make('/tests/cases', { title: 'Cart', steps: [openShop, checkTotal] });
    const search = await p.make('/tests/cases', { title: 'Search', steps: [openShop, checkTotal] });
    // Search flips: pass, fail, pass, then fails again below.
    await p.run([checkout, cart, search], {});
    await p.run([search], { [search]: ['pass', totalWrong(7)] });
    await p.run([search], {});
    await p.signed(1);
    const runId = await p.run([checkout, cart, search], {
      [checkout]: ['pass', 'pass', payDrifted],
      [cart]: [shopDown],
      [search]: ['pass', totalWrong(8)],
    });
    await p.signed(4);
    const answer = await p.triage(runId);
    const byCase = Object.fromEntries(answer.cases.map((c) => [c.testCaseId, c]));
    expect(byCase[checkout]).to.include({
      category: 'locator_drift',
      suggestedAction: 'accept_healing',
      decidedBy: 'facts',
      stepIndex: 2,
      title: 'Checkout',
    });
    expect(byCase[checkout].reasons[0])
      .to.contain('the first candidate matched nothing')
      .and.contain('matched 1 element');
    expect(byCase[cart]).to.include({ category: 'environment', suggestedAction: 're_run' });
    expect(byCase[search]).to.include({ category: 'flaky', suggestedAction: 'quarantine' });
    expect(byCase[search].reasons[0]).to.contain('changed 3 times');
    expect(byCase[search].similar.map((s: any) => s.testCaseId)).to.deep.equal([search]);
    // The same inputs, the same answer.
    expect(await p.triage(runId)).to.deep.equal(answer);

    // A regression: it passed before, the element is there, the value is wrong.
    const regression = await p.run([cart], { [cart]: ['pass', totalWrong(41)] });
    const [cartCase] = (await p.triage(regression)).cases;
    expect(cartCase).to.include({ category: 'product_regression', suggestedAction: 'file_bug', confidence: 0.85 });
    expect(cartCase.reasons.join(' ')).to.contain('the page showed "Total: 41"');

    // A person corrects the regression's signature: it wins from then on.
    const put = await p.req('PUT', '/ai/triage/corrections', {
      signature: cartCase.signature,
      category: 'flaky',
      note: 'animation race',
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect((await p.triage(regression)).cases[0]).to.include({
      category: 'flaky',
      decidedBy: 'correction',
      confidence: 1,
    });
    expect((await p.req('GET', '/ai/triage/corrections')).body.items.map((c: any) => c.signature)).to.deep.equal([
      cartCase.signature,
    ]);
    expect((await p.req('DELETE', `/ai/triage/corrections/${cartCase.signature}`)).status).to.equal(204);
    expect((await p.req('DELETE', `/ai/triage/corrections/${cartCase.signature}`)).status).to.equal(404);
    // A project rule on the message.
    const rule = await p.req('POST', '/ai/triage/rules', {
      field: 'message',
      pattern: '*got "Total: 4*',
      category: 'known_issue',
      note: 'rounding, BUG-12',
    });
    expect(rule.status, JSON.stringify(rule.body)).to.equal(201);
    expect(rule.body.id).to.match(/^air_/);
    const ruled = (await p.triage(regression)).cases[0];
    expect(ruled).to.include({ category: 'known_issue', decidedBy: 'rule', confidence: 0.95 });
    expect(ruled.reasons[0]).to.contain(rule.body.id);
    expect((await p.req('GET', `/ai/triage/rules/${rule.body.id}`)).body).to.deep.equal(rule.body);
    expect((await p.req('DELETE', `/ai/triage/rules/${rule.body.id}`)).status).to.equal(204);
    expect((await p.triage(regression)).cases[0].category).to.equal('product_regression');
    // Bad input.
    const badRule = await p.req('POST', '/ai/triage/rules', { pattern: '', category: 'weather' });
    expect(badRule.status).to.equal(400);
    expect(badRule.body.error.details.fields.map((f: any) => f.field).sort()).to.deep.equal([
      'body.category',
      'body.pattern',
    ]);
    expect(
      (await p.req('PUT', '/ai/triage/corrections', { signature: 'sig_short', category: 'flaky' })).status,
    ).to.equal(400);
    expect((await p.req('POST', '/ai/runs/otr_unknown/triage')).status).to.equal(404);
  });

  it('drafts a bug from a failed step; saved, it is linked found_by and shown with later failures of the signature', async () => {
    const p = await project();
    const hook = await p.make('/webhooks', { url: hooks.url, events: ['failure_cluster.new'] });
    expect(hook).to.match(/^wh_/);
    const checkout = await p.make('/tests/cases', { title: 'Checkout', steps: [openShop, checkTotal, clickPay] });
    const runId = await p.run([checkout], { [checkout]: ['pass', totalWrong(40)] });
    const [cluster] = (await p.signed(1)).items;
    const announced = await hooks.one('failure_cluster.new', (r) => r.payload.projectId === p.projectId);
    expect(announced.payload.data).to.include({
      signature: cluster.signature,
      code: 'E_ASSERT_FAILED',
      locator: 'testid=total',
    });
    expect(announced.payload.data.example).to.deep.equal({ runId, stepIndex: 1, testCaseId: checkout });

    const draft = await p.req('POST', '/ai/bugs/draft', { runId, stepIndex: 1 });
    expect(draft.status, JSON.stringify(draft.body)).to.equal(200);
    expect(draft.body).to.include({ signature: cluster.signature, runId, stepIndex: 1, testCaseId: checkout });
    expect(draft.body.title).to.equal(
      'Checkout: check that the text of the element with test id “total” is “Total: 42” fails (E_ASSERT_FAILED)',
    );
    expect(draft.body.stepsToReproduce).to.deep.equal([
      'Go to “{{base}}/shop”.',
      'Check that the text of the element with test id “total” is “Total: 42”.',
    ]);
    expect(draft.body.actualResult).to.contain('The page showed “Total: 40”');
    expect(draft.body.environment)
      .to.contain('Variables (names only): base, secret_password')
      .and.not.contain('hunter2');
    expect(draft.body.evidence.map((e: any) => e.kind)).to.deep.equal(['run', 'console']);
    expect(draft.body).to.not.have.property('bug');
    expect((await p.req('POST', '/ai/bugs/draft', { runId, stepIndex: 0 })).status).to.equal(400);

    const saved = await p.req('POST', '/ai/bugs/draft', { runId, stepIndex: 1, save: true, severity: 'critical' });
    expect(saved.status, JSON.stringify(saved.body)).to.equal(200);
    const bugId = saved.body.bug.id as string;
    expect(saved.body.bug).to.include({ title: draft.body.title, severity: 'critical', status: 'open' });
    const links = await p.req('GET', `/bugs/${bugId}/links`);
    expect(links.body.items.map((l: any) => [l.relation, l.artifact.id])).to.deep.equal([['found_by', checkout]]);
    // Later failures of the same cause show the bug, and triage calls them known.
    const later = await p.run([checkout], { [checkout]: ['pass', totalWrong(38)] });
    const [again] = (await p.signed(2)).items;
    expect(again.bugs).to.deep.equal([{ id: bugId, title: draft.body.title, status: 'open' }]);
    const [known] = (await p.triage(later)).cases;
    expect(known).to.include({ category: 'known_issue', suggestedAction: 'follow_bug' });
    expect(known.bugs.map((b: any) => b.id)).to.deep.equal([bugId]);
    // A read key drafts but does not save.
    const reader = await p.req('POST', '/api-keys', { name: 'reader', scope: 'read' });
    expect(reader.status, JSON.stringify(reader.body)).to.equal(201);
    const readKey = reader.body.key as string;
    expect(
      (await t.request('POST', '/ai/bugs/draft', { key: readKey, body: { runId: later, stepIndex: 1 } })).status,
    ).to.equal(200);
    const refused = await t.request('POST', '/ai/bugs/draft', {
      key: readKey,
      body: { runId: later, stepIndex: 1, save: true },
    });
    expect(refused.status).to.equal(403);
    expect((await p.req('GET', '/bugs')).body.items.map((b: any) => b.id)).to.deep.equal([bugId]);
  });

  it('backfills runs whose failures were never signed, and counts none twice', async () => {
    const p = await project();
    const cart = await p.make('/tests/cases', { title: 'Cart', steps: [openShop, checkTotal] });
    const runId = await p.run([cart], { [cart]: ['pass', totalWrong(3)] });
    await p.signed(1);
    const db = t.service.db;
    // The backfill walks again over a run already signed: nothing is counted twice.
    const finishedAt = new Date((await p.req('GET', `/otp/runs/${runId}`)).body.finishedAt).getTime();
    const walkedPast = async () => {
      const at = (await db.raw('SELECT finished_at FROM ai_scan_progress')).rows[0]?.finished_at as Date | undefined;
      expect(at?.getTime() ?? 0).to.be.at.least(finishedAt);
    };
    await eventually(walkedPast, 10_000);
    await db.raw('DELETE FROM ai_scan_progress');
    await eventually(walkedPast, 10_000);
    expect((await p.clusters()).items.map((c) => c.count)).to.deep.equal([1]);
    await db.raw('DELETE FROM ai_failures WHERE project_id = ?', [p.projectId]);
    await db.raw('DELETE FROM ai_case_outcomes WHERE project_id = ?', [p.projectId]);
    await db.raw('DELETE FROM ai_failure_signatures WHERE project_id = ?', [p.projectId]);
    await db.raw('DELETE FROM ai_scan_progress');
    expect((await p.clusters()).items).to.deep.equal([]);
    const [cluster] = (await p.signed(1)).items;
    expect(cluster).to.include({ count: 1, runs: 1, cases: 1 });
  });

  it('answers the same through the MCP tools, a read key drafting but not saving', async () => {
    const p = await project();
    const checkout = await p.make('/tests/cases', { title: 'Checkout', steps: [openShop, checkTotal] });
    const runId = await p.run([checkout], { [checkout]: ['pass', totalWrong(40)] });
    const page = await p.signed(1);
    const readKey = (await p.req('POST', '/api-keys', { name: 'agent', scope: 'read' })).body.key as string;
    const client = await mcpClient(t.service.restUrl, readKey);
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      for (const name of ['svc_list_failures', 'svc_triage_run', 'svc_draft_bug'])
        expect(byName.get(name)?.description, name).to.contain('Needs scope read');
      expect(byName.get('svc_list_failures')!.annotations).to.include({ readOnlyHint: true });
      expect(byName.get('svc_draft_bug')!.annotations).to.include({ readOnlyHint: false, destructiveHint: false });
      const listed = await call(client, 'svc_list_failures', {});
      expect(listed.isError).to.equal(false);
      expect(listed.body).to.deep.equal(page);
      const triaged = await call(client, 'svc_triage_run', { runId });
      expect(triaged.body).to.deep.equal(await p.triage(runId));
      const drafted = await call(client, 'svc_draft_bug', { runId, stepIndex: 1 });
      expect(drafted.body).to.deep.equal((await p.req('POST', '/ai/bugs/draft', { runId, stepIndex: 1 })).body);
      const saving = await call(client, 'svc_draft_bug', { runId, stepIndex: 1, save: true });
      expect(saving.isError).to.equal(true);
      expect(JSON.stringify(saving.body)).to.contain('FORBIDDEN');
      expect((await call(client, 'svc_triage_run', { runId: 'otr_unknown' })).isError).to.equal(true);
    } finally {
      await client.close();
    }
  });

  it('is in /openapi.json under the tag ai', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const [path, methods] of [
      ['/api/v1/ai/failures', ['get']],
      ['/api/v1/ai/runs/{id}/triage', ['post']],
      ['/api/v1/ai/bugs/draft', ['post']],
      ['/api/v1/ai/triage/rules', ['get', 'post']],
      ['/api/v1/ai/triage/corrections', ['get', 'put']],
    ] as const) {
      for (const method of methods) expect(doc.paths[path]?.[method]?.tags, `${method} ${path}`).to.deep.equal(['ai']);
    }
  });
});
