// Which projects have an active webhook subscription, kept in memory so that a run's finish in a
// project without one skips the outbox: the cache's rules (an injected clock and reader), and the same
// cache over the real database, told by the trigger's notices, with a real receiver at the end.
import { expect } from 'chai';
import { WebhookSubscriptions } from '../../src/artifacts/index.js';
import { type Notice, Notifier } from '../../src/db/notifier.js';
import { createLogger } from '../../src/log.js';
import { SubscribedProjects } from '../../src/webhook-delivery/subscribed-projects.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

describe('Subscribed projects: what is kept, and for how long', () => {
  let now = 0;
  let answer = false;
  let reads = 0;
  let release: (() => void) | undefined;
  const reader = {
    anyActive: async () => {
      reads++;
      const value = answer;
      if (release === undefined) return value;
      await new Promise<void>((resolve) => (release = resolve));
      return value;
    },
  };
  const projects = () => new SubscribedProjects(reader, () => now);
  beforeEach(() => {
    now = 0;
    answer = false;
    reads = 0;
    release = undefined;
  });

  it('reads a project once, then answers from memory until its answer is 30 s old', async () => {
    const cache = projects();
    expect(await cache.subscribed('prj_a')).to.equal(false);
    answer = true;
    now = 29_999;
    expect(await cache.subscribed('prj_a')).to.equal(false);
    expect(reads).to.equal(1);
    now = 30_000;
    expect(await cache.subscribed('prj_a')).to.equal(true);
    expect(reads).to.equal(2);
  });

  it('reads a project again after a notice about it, and every project after notices were missed', async () => {
    const cache = projects();
    await cache.subscribed('prj_a');
    await cache.subscribed('prj_b');
    answer = true;
    cache.forget('prj_a');
    expect(await cache.subscribed('prj_a')).to.equal(true);
    expect(await cache.subscribed('prj_b')).to.equal(false);
    cache.forgetAll();
    expect(await cache.subscribed('prj_b')).to.equal(true);
    expect(reads).to.equal(4);
  });

  it('does not keep an answer read while a notice arrived: it may predate the change', async () => {
    const cache = projects();
    release = () => {};
    const reading = cache.subscribed('prj_a');
    cache.forget('prj_a');
    release();
    expect(await reading).to.equal(false);
    release = undefined;
    answer = true;
    expect(await cache.subscribed('prj_a')).to.equal(true);
    expect(reads).to.equal(2);
  });

  it('counts a project whose subscription is being written here as subscribed for 10 s, whatever notices say', async () => {
    const cache = projects();
    await cache.subscribed('prj_a');
    cache.pin('prj_a');
    cache.forget('prj_a');
    cache.forgetAll();
    now = 9_999;
    expect(await cache.subscribed('prj_a')).to.equal(true);
    expect(reads).to.equal(1);
    now = 10_000;
    expect(await cache.subscribed('prj_a')).to.equal(false);
    expect(reads).to.equal(2);
  });
});

describe('Subscribed projects over the database', () => {
  let t: TestService;
  let notifier: Notifier;
  const notices: Notice[] = [];
  const receivers: WebhookReceiver[] = [];
  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100 } });
    notifier = new Notifier(t.service.db, t.database.url, 'ins_subscribed_test', createLogger('silent'));
    notifier.on('webhook-subscriptions', (notice) => notices.push(notice));
    await notifier.listen();
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await notifier?.stop();
    await t?.stop();
  });

  /** Resolves at the next notice about the project's subscriptions (the trigger's, sent at commit). */
  function noticeFor(projectId: string): Promise<void> {
    const seen = notices.length;
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`no webhook-subscriptions notice for ${projectId}`)), 5_000);
      const look = () => {
        if (notices.slice(seen).some((n) => n.kind === 'webhook-subscriptions' && n.projectId === projectId)) {
          clearTimeout(deadline);
          resolve();
        } else setImmediate(look);
      };
      look();
    });
  }

  it('hears of every write of a subscription at commit, whoever makes it', async () => {
    const { key, projectId } = await t.newProject('admin');
    const cache = new SubscribedProjects(new WebhookSubscriptions(t.service.db));
    expect(await cache.subscribed(projectId)).to.equal(false);

    let heard = noticeFor(projectId);
    const created = await t.request('POST', '/webhooks', {
      key,
      body: { url: 'https://8.8.8.8/hook', events: ['run.finished'] },
    });
    expect(created.status).to.equal(201);
    await heard;
    // Until it is told, this cache (not the service's) still answers what it read.
    expect(await cache.subscribed(projectId)).to.equal(false);
    cache.forget(projectId);
    expect(await cache.subscribed(projectId)).to.equal(true);

    heard = noticeFor(projectId);
    expect(
      (await t.request('PATCH', `/webhooks/${created.body.id}`, { key, body: { active: false } })).status,
    ).to.equal(200);
    await heard;
    cache.forget(projectId);
    expect(await cache.subscribed(projectId), 'an inactive subscription wants nothing').to.equal(false);

    heard = noticeFor(projectId);
    expect((await t.request('PATCH', `/webhooks/${created.body.id}`, { key, body: { active: true } })).status).to.equal(
      200,
    );
    await heard;
    cache.forget(projectId);
    expect(await cache.subscribed(projectId)).to.equal(true);

    heard = noticeFor(projectId);
    expect((await t.request('DELETE', `/webhooks/${created.body.id}`, { key })).status).to.equal(204);
    await heard;
    cache.forget(projectId);
    expect(await cache.subscribed(projectId)).to.equal(false);
  });

  it("reports a run's finish to a subscription created after the project's runs finished without one", async function () {
    this.timeout(20_000);
    const { key } = await t.newProject('admin');
    const caseRes = await t.request('POST', '/tests/cases', {
      key,
      body: { title: 'One step', steps: [{ otp: { action: 'navigate', url: 'https://app.test/' } }] },
    });
    expect(caseRes.status).to.equal(201);
    const executor = await TestExecutor.connect(t.otpUrl, { key });
    try {
      await executor.hello();
      const runOnce = async () => {
        const run = await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [caseRes.body.id] } });
        expect(run.status).to.equal(202);
        executor.result(await executor.next('step.exec'), 'pass');
        expect((await executor.next('run.finished')).payload.status).to.equal('passed');
        const stored = await t.request('GET', `/otp/runs/${run.body.runId}`, { key });
        expect(stored.body.status, 'the verdict is written, with or without a subscription').to.equal('passed');
        return run.body.runId as string;
      };
      const before = await runOnce(); // the service now knows the project has no subscription
      const r = await WebhookReceiver.start();
      receivers.push(r);
      expect(
        (await t.request('POST', '/webhooks', { key, body: { url: r.url, events: ['run.finished'] } })).status,
      ).to.equal(201);
      const after = await runOnce();
      await r.waitFor('run.finished', (all) => all.length >= 1);
      expect(r.received.map((x) => x.payload.data.runId)).to.deep.equal([after]);
      expect(after).to.not.equal(before);
    } finally {
      executor.close();
    }
  });
});
