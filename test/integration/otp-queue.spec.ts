// The queue through POST /otp/runs (docs/queues.md): classes, groups, maxInFlight from the project's
// settings, cancelInProgress, and the request's checks; a real service, PostgreSQL and executor.
import diagnostics from 'node:diagnostics_channel';
import { expect } from 'chai';
import pg from 'pg';
import { newId } from '../../src/ids.js';
import type { RunClaimMessage } from '../../src/otp/engine/diagnostics.js';
import { RunStore } from '../../src/otp/store/run-store.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { insertOneStepRun } from '../support/queued-run.js';
import { startTestService, type TestService } from '../support/service.js';

const locator = { by: 'role', value: 'button', name: 'Go' };

describe('OTP: the queue (groups, priorities, limits, superseded runs)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100, resumeWindowMs: 0 } });
  });
  after(async () => t?.stop());

  async function project() {
    const { key, projectId, tenantId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    const testCase = (
      await req('POST', '/tests/cases', { title: 'one', steps: [{ otp: { action: 'click', locator } }] })
    ).body.id as string;
    const post = async (extra: Record<string, unknown> = {}) => {
      const posted = await req('POST', '/otp/runs', { testCaseIds: [testCase], ...extra });
      expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
      return posted.body as { runId: string; status: string; group?: string; priority?: string };
    };
    const executor = async (maxParallel: number) => {
      const e = await TestExecutor.connect(t.otpUrl, { key });
      await e.hello({ maxParallel });
      return e;
    };
    /** The executor's next run starts; it passes and finishes. Answers the run's id. */
    const runNext = async (e: TestExecutor) => {
      const start = await e.next('run.start');
      e.result(await e.next('step.exec'), 'pass');
      await e.next('run.finished');
      return start.runId as string;
    };
    return { key, projectId, tenantId, testCase, req, post, executor, runNext };
  }

  it('starts the best class first (gate, normal, batch), each run showing its group and class', async () => {
    const p = await project();
    const e = await p.executor(1);
    const first = await p.post();
    expect(first.status).to.equal('running');
    const batch1 = await p.post({ group: 'nightly', priority: 'batch' });
    const batch2 = await p.post({ group: 'nightly', priority: 'batch' });
    const normal = await p.post({ group: 'pr-12' });
    const gate = await p.post({ group: 'hotfix', priority: 'gate' });
    expect(batch1).to.include({ status: 'queued', group: 'nightly', priority: 'batch' });
    expect(normal).to.include({ group: 'pr-12', priority: 'normal' });
    const order = [];
    for (let i = 0; i < 5; i++) order.push(await p.runNext(e));
    expect(order).to.deep.equal([first.runId, gate.runId, normal.runId, batch1.runId, batch2.runId]);
    e.close();
  });

  it("a run without a group is in its credential's group, class normal", async () => {
    const p = await project();
    const posted = await p.post();
    expect(posted.priority).to.equal('normal');
    expect(posted.group).to.match(/^key_/);
  });

  it("a group at its maxInFlight (project settings) waits while the session has room; another group's run starts", async () => {
    const p = await project();
    const patched = await p.req('PATCH', '/platform/settings', { queue: { groups: { deploy: { maxInFlight: 1 } } } });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.queue.groups).to.deep.equal({ deploy: { maxInFlight: 1 } });
    const e = await p.executor(3);
    const d1 = await p.post({ group: 'deploy' });
    const d2 = await p.post({ group: 'deploy' });
    // Queued behind d2 at its insert (a run waits), then claimed at once: the session has room.
    const other = await p.post({ group: 'docs' });
    expect([d1.status, d2.status]).to.deep.equal(['running', 'queued']);
    const started = [(await e.next('run.start')).runId, (await e.next('run.start')).runId];
    expect(started.sort()).to.deep.equal([d1.runId, other.runId].sort());
    expect((await p.req('GET', `/otp/runs/${d2.runId}`)).body.status).to.equal('queued');
    e.close();
  });

  it("cancelInProgress cancels the group's queued runs (each naming the run that superseded it); cancelRunning its running ones", async () => {
    const p = await project();
    const e = await p.executor(1);
    const running = await p.post({ group: 'branch-x' });
    expect(running.status).to.equal('running');
    const queued = await p.post({ group: 'branch-x' });
    const otherGroup = await p.post({ group: 'branch-y' });
    const newest = await p.post({ group: 'branch-x', cancelInProgress: true });
    const old = (await p.req('GET', `/otp/runs/${queued.runId}`)).body;
    expect(old).to.include({ status: 'cancelled', supersededBy: newest.runId });
    expect((await p.req('GET', `/otp/runs/${otherGroup.runId}`)).body.status).to.equal('queued');
    expect((await p.req('GET', `/otp/runs/${running.runId}`)).body.status).to.equal('running');
    const latest = await p.post({ group: 'branch-x', cancelInProgress: true, cancelRunning: true });
    expect((await e.next('run.cancel')).runId).to.equal(running.runId);
    await e.next('run.finished');
    const view = (await p.req('GET', `/otp/runs/${running.runId}`)).body;
    expect(view).to.include({ status: 'cancelled', supersededBy: latest.runId });
    expect((await p.req('GET', `/otp/runs/${newest.runId}`)).body).to.include({ status: 'cancelled' });
    e.close();
  });

  it('shows each queued run its position and an estimated start; a position rises only for a better class', async () => {
    const p = await project();
    const e = await p.executor(1);
    // A finished run gives the estimate its durations.
    await p.post();
    await p.runNext(e);
    const running = await p.post({ group: 'a' });
    expect(running.status).to.equal('running');
    await e.next('run.start');
    const queued = [await p.post({ group: 'a' }), await p.post({ group: 'a' }), await p.post({ group: 'a' })];
    const standing = async (runId: string) => (await p.req('GET', `/otp/runs/${runId}`)).body.queue;
    const first = await standing(queued[0]!.runId);
    expect(first.position).to.equal(0);
    expect(Date.parse(first.estimatedStart.from)).to.be.at.most(Date.parse(first.estimatedStart.to));
    expect((await standing(queued[2]!.runId)).position).to.equal(2);
    // Another group of the same class: shown positions do not rise.
    await p.post({ group: 'b' });
    expect((await standing(queued[2]!.runId)).position).to.equal(2);
    // A gate run goes ahead of them all: their positions rise by one.
    const gate = await p.post({ group: 'c', priority: 'gate' });
    expect((await standing(gate.runId)).position).to.equal(0);
    expect((await standing(queued[2]!.runId)).position).to.equal(3);
    const list = (await p.req('GET', '/otp/runs?status=queued')).body.items as Array<{ id: string; queue?: object }>;
    expect(list.every((run) => run.queue)).to.equal(true);
    expect((await p.req('GET', `/otp/runs/${running.runId}`)).body.queue).to.equal(undefined);
    // The console's run page (its live fragment) says it too.
    const page = await fetch(`${t.service.restUrl}/console/f/runs/${queued[2]!.runId}`, {
      headers: { authorization: `Bearer ${p.key}` },
    });
    const text = await page.text();
    expect(text).to.contain('id="run-queue"');
    expect(text).to.match(
      /3 runs ahead, starts in (under a minute|about \d+(-\d+)? min) <span class="muted">\(between /,
    );
    expect(text).to.contain('a (normal)');
    e.close();
  });

  it('reads a queued run where it stands without writing it again while what it shows holds', async () => {
    const p = await project();
    const e = await p.executor(1);
    await p.post();
    await e.next('run.start');
    const queued = await p.post();
    expect(queued.status).to.equal('queued');
    const db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    try {
      // The row's version (xmin) changes with every write of it.
      const version = async () =>
        (await db.query('SELECT xmin::text AS v FROM otp_runs WHERE id = $1', [queued.runId])).rows[0].v as string;
      // The first read writes what it shows; the next ones, showing the same, do not.
      expect((await p.req('GET', `/otp/runs/${queued.runId}`)).body.queue.position).to.equal(0);
      const written = await version();
      for (let i = 0; i < 3; i++) {
        expect((await p.req('GET', `/otp/runs/${queued.runId}`)).body.queue.position).to.equal(0);
      }
      expect(await version()).to.equal(written);
      // A gate run goes ahead: the position shown rises, its own-class part is still not written.
      await p.post({ priority: 'gate' });
      expect((await p.req('GET', `/otp/runs/${queued.runId}`)).body.queue.position).to.equal(1);
      expect(await version()).to.equal(written);
    } finally {
      await db.end();
      e.close();
    }
  });

  it("claims the runs waiting for a process's sessions in one statement, each session in turn", async () => {
    const p = await project();
    // The first session claims as it gets ready and finds nothing: wait for that claim. The sessions
    // welcomed after it claim nothing (the project's queue is known dry), so none is in flight.
    const claims: RunClaimMessage[] = [];
    const listen = (m: unknown) => claims.push(m as RunClaimMessage);
    diagnostics.subscribe('otp:run.claim', listen);
    const first = await p.executor(1);
    await eventually(async () => expect(claims.some((c) => c.sessionId === first.sessionId)).to.equal(true));
    diagnostics.unsubscribe('otp:run.claim', listen);
    const executors = [first, await p.executor(1), await p.executor(2)];
    // Four runs queued behind the engine's back (nothing wakes a claim), then the safety net finds them.
    const store = new RunStore(t.service.db);
    const ids = [newId('otr'), newId('otr'), newId('otr'), newId('otr')].sort();
    for (const id of ids)
      await insertOneStepRun(store, {
        tenantId: p.tenantId,
        projectId: p.projectId,
        id,
        testCaseId: p.testCase,
        action: { action: 'click', locator },
      });
    await t.service.engine.reconcile();
    const db = new pg.Client({ connectionString: t.database.url });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT id, session_id, xmin::text AS version FROM otp_runs WHERE id = ANY($1) ORDER BY id',
        [ids],
      );
      // One transaction wrote them all; the session with the most room took first (the oldest two).
      expect(new Set(rows.map((r) => r.version)).size).to.equal(1);
      const [wide, ...narrow] = [executors[2]!, executors[0]!, executors[1]!];
      expect(rows.slice(0, 2).map((r) => r.session_id)).to.deep.equal([wide.sessionId, wide.sessionId]);
      expect(
        rows
          .slice(2)
          .map((r) => r.session_id)
          .sort(),
      ).to.deep.equal(narrow.map((e) => e.sessionId).sort());
    } finally {
      await db.end();
    }
    for (const e of executors) {
      const runs = e === executors[2] ? 2 : 1;
      for (let i = 0; i < runs; i++) await e.next('run.start');
      for (let i = 0; i < runs; i++) e.result(await e.next('step.exec'), 'pass');
      for (let i = 0; i < runs; i++) expect((await e.next('run.finished')).payload.status).to.equal('passed');
      e.close();
    }
  });

  it('refuses a bad priority, and cancelRunning without cancelInProgress, with a clear error', async () => {
    const p = await project();
    const badClass = await p.req('POST', '/otp/runs', { testCaseIds: ['tc_x'], priority: 'urgent' });
    expect(badClass.status).to.equal(400);
    expect(JSON.stringify(badClass.body)).to.contain('priority');
    const run = (await p.req('POST', '/tests/cases', { title: 'c', steps: [{ otp: { action: 'click', locator } }] }))
      .body.id;
    const alone = await p.req('POST', '/otp/runs', { testCaseIds: [run], cancelRunning: true });
    expect(alone.status).to.equal(400);
    expect(alone.body.error.details.fields).to.deep.equal([
      { field: 'body.cancelRunning', message: 'give cancelInProgress: true as well' },
    ]);
  });
});
