// Webhook delivery end to end: real receivers on loopback verify every request with the
// standardwebhooks package; events come from real REST writes and a real OTP run driven by a test
// executor; payloads are checked against the event schemas of /openapi.json.
import { expect } from 'chai';
import { WebhookSubscriptions } from '../../src/artifacts/index.js';
import { EventType } from '../../src/db/change-events.js';
import { createLogger } from '../../src/log.js';
import { startService } from '../../src/service.js';
import { ajv } from '../../src/validation/ajv.js';
import { DeliveryStore } from '../../src/webhook-delivery/delivery-store.js';
import { webhookEvents } from '../../src/webhook-delivery/index.js';
import { Outbox } from '../../src/webhook-delivery/outbox.js';
import { SubscribedProjects } from '../../src/webhook-delivery/subscribed-projects.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';
import { type Received, verifies, WebhookReceiver } from '../support/webhook-receiver.js';

const navigate = { otp: { action: 'navigate', url: 'https://app.test/' } };
// Fast retries, but the service's own attempt time-out: no test here is about a slow receiver, and on a
// loaded machine a local receiver can take seconds to answer (a 2 s time-out made a second attempt).
const fastDelivery = {
  retryScheduleMs: [100, 200, 400, 800],
  jitter: 0.2,
  attemptTimeoutMs: 10_000,
  pollMs: 500,
  disableAfterFailures: 3,
  disableAfterMs: 0,
};

/** The payload matches the schema of its event type (the one /openapi.json publishes). */
function expectSchema(r: Received) {
  const entry = webhookEvents.find((e) => e.type === r.payload.type);
  expect(entry, `a schema for ${r.payload.type}`).to.not.equal(undefined);
  const validate = ajv.getSchema(entry!.schema)!;
  expect(validate(r.payload), `${r.payload.type}: ${JSON.stringify(validate.errors)}`).to.equal(true);
}

describe('Webhook delivery', () => {
  let t: TestService;
  const receivers: WebhookReceiver[] = [];
  before(async () => {
    t = await startTestService({ heartbeatMs: 200, otp: { stepGraceMs: 100 }, webhooks: fastDelivery });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t?.stop();
  });

  async function receiver() {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  }

  async function project(service = t) {
    const { key, projectId } = await service.newProject('admin');
    const req = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      service.request(method, path, { key, body, headers });
    const make = async (path: string, body: unknown) => {
      const res = await req('POST', path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
      return res.body.id as string;
    };
    const deliveries = async (webhookId: string, query = '') =>
      (await req('GET', `/webhooks/${webhookId}/deliveries?limit=200${query}`)).body.items as any[];
    return { key, projectId, req, make, deliveries };
  }

  it('delivers every documented event, signed, once per event id, with payloads that match their schemas', async function () {
    this.timeout(30_000);
    const r = await receiver();
    const p = await project();
    const secret = `whsec_${Buffer.from('a'.repeat(32)).toString('base64')}`;
    const hook = await p.make('/webhooks', { url: r.url, events: ['*'], secret });
    const bugsOnly = await receiver();
    await p.make('/webhooks', { url: bugsOnly.url, events: ['bug.created'] });
    const other = await project(); // another project's changes never reach these webhooks

    const expected: string[] = [];
    // Every artifact kind: created, updated, deleted.
    const caseId = await p.make('/tests/cases', { title: 'Sign in', steps: [navigate] });
    const runId = await p.make('/tests/runs', { title: 'manual' });
    const bodies: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      ['bug', '/bugs', { title: 'Broken' }, { severity: 'major' }],
      ['ticket', '/tickets', { title: 'Export' }, { estimate: 2 }],
      ['requirement', '/requirements', { title: 'Sign in works' }, { title: 'Signing in works' }],
      ['specification', '/specifications', { title: 'Login flow' }, { title: 'The login flow' }],
      ['test_plan', '/tests/plans', { title: 'Smoke', testCaseIds: [caseId] }, { title: 'Smoke tests' }],
      [
        'test_result',
        '/tests/results',
        { testRunId: runId, testCaseId: caseId, status: 'passed' },
        { status: 'failed' },
      ],
      ['release', '/releases', { name: '1.0.0' }, { releaseDate: '2027-01-01' }],
      ['release_plan', '/release-plans', { title: '1.0 plan' }, { title: 'The 1.0 plan' }],
      ['milestone', '/milestones', { title: 'Beta' }, { dueDate: '2027-01-01' }],
      ['kb_article', '/kb', { title: 'How to test', content: 'npm test' }, { content: 'npm run test' }],
      ['memory', '/memories', { content: 'Small pull requests' }, { importance: 4 }],
      ['note', '/notes', { content: 'Check the logs' }, { pinned: true }],
    ];
    expected.push('test_case.created', 'test_run.created');
    for (const [kind, path, body, patch] of bodies) {
      const id = await p.make(path, body);
      const updated = await p.req('PATCH', `${path}/${id}`, patch);
      expect(updated.status, `${path}: ${JSON.stringify(updated.body)}`).to.equal(200);
      const deleted = await p.req('DELETE', `${path}/${id}`);
      expect(deleted.status, `${path}: ${JSON.stringify(deleted.body)}`).to.equal(204);
      expected.push(`${kind}.created`, `${kind}.updated`, `${kind}.deleted`);
      if (kind === 'test_result') expected.push('test_result.recorded');
    }
    await other.make('/bugs', { title: 'Not yours' });

    // A run through a test executor: run.finished, its results recorded, its test run closed.
    const testRunId = await p.make('/tests/runs', { title: 'regression', testCaseIds: [caseId] });
    expected.push('test_run.created');
    const executor = await TestExecutor.connect(t.otpUrl, { key: p.key });
    await executor.hello();
    const run = await p.req('POST', '/otp/runs', { testCaseIds: [caseId], testRunId, finishTestRun: true });
    expect(run.status).to.equal(202);
    executor.result(await executor.next('step.exec'), 'pass');
    expect((await executor.next('run.finished')).payload.status).to.equal('passed');
    expected.push('run.finished', 'test_result.created', 'test_result.recorded', 'test_run.updated', 'test_run.closed');
    executor.close();

    // A recording made over the socket: its stop makes a test case and reports recording.finished.
    const recorder = await TestExecutor.connect(t.otpUrl, { key: p.key });
    await recorder.hello({ record: true, replay: false });
    const ask = recorder.send('record.start', { title: 'Recorded flow' });
    const recordingId = (await recorder.next('record.start', (f) => f.ref === ask)).payload.recordingId as string;
    for (const value of ['a', 'b', 'c']) {
      const id = recorder.send('event.recorded', {
        step: { otp: { action: 'click', locator: { by: 'testid', value } } },
        recordingId,
      });
      await recorder.next('ack', (f) => f.ref === id);
    }
    const stopAsk = recorder.send('record.stop', { recordingId });
    const recordedCaseId = (await recorder.next('record.stop', (f) => f.ref === stopAsk)).payload.testCaseId as string;
    recorder.close();
    expected.push('test_case.created');
    // A rolled-back change reports nothing.
    const subscriptions = new WebhookSubscriptions(t.service.db);
    const outbox = new Outbox(subscriptions, new SubscribedProjects(subscriptions));
    const finishedAt = new Date().toISOString();
    await t.service.db
      .transaction(async (trx) => {
        await outbox.record(trx, {
          type: EventType.recordingFinished,
          tenantId: 'ten_x',
          projectId: p.projectId,
          data: { id: 'rec_never', stepCount: 0, finishedAt },
        });
        throw new Error('rolled back');
      })
      .catch(() => {});
    expected.push('recording.finished');

    await r.waitFor(`${expected.length} events`, (all) => all.length >= expected.length, 20_000);
    const run2 = run.body.runId;
    const types = r.received.map((x) => x.payload.type);
    expect([...types].sort()).to.deep.equal([...expected].sort());
    for (const x of r.received) {
      expect(x.status).to.equal(200);
      expect(x.id).to.equal(x.payload.id);
      expect(x.payload.projectId).to.equal(p.projectId);
      expect(verifies(x, secret), `${x.payload.type} is signed with the webhook's secret`).to.equal(true);
      expect(verifies(x, `whsec_${Buffer.from('b'.repeat(32)).toString('base64')}`)).to.equal(false);
      expectSchema(x);
    }
    expect(new Set(r.received.map((x) => x.id)).size, 'one request per event id').to.equal(r.received.length);
    expect(r.received.find((x) => x.payload.type === 'run.finished')!.payload.data).to.include({
      id: run2,
      status: 'passed',
      testRunId,
    });
    expect(r.received.find((x) => x.payload.type === 'test_run.closed')!.payload.data).to.include({
      id: testRunId,
      status: 'closed',
    });
    expect(r.received.find((x) => x.payload.type === 'recording.finished')!.payload.data).to.include({
      id: recordingId,
      stepCount: 3,
      testCaseId: recordedCaseId,
      sessionId: recorder.sessionId,
    });
    await bugsOnly.waitFor('bug.created', (all) => all.length >= 1);
    expect(bugsOnly.received.map((x) => x.payload.type)).to.deep.equal(['bug.created']);

    // The delivery log: one delivery per event, each succeeded at its first attempt.
    const log = await eventually(async () => {
      const items = await p.deliveries(hook);
      expect(items.filter((d) => d.status === 'succeeded')).to.have.length(expected.length);
      return items;
    });
    expect(log).to.have.length(expected.length);
    for (const d of log) {
      expect(d).to.include({
        webhookId: hook,
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 200,
        lastError: null,
        nextAttemptAt: null,
      });
      expect(d.attemptLog).to.have.length(1);
    }
    expect((await p.deliveries(hook, '&eventType=run.finished')).map((d) => d.eventType)).to.deep.equal([
      'run.finished',
    ]);
    const one = await p.req('GET', `/webhooks/${hook}/deliveries/${log[0].id}`);
    expect(one.status).to.equal(200);
    expect(one.body.payload.id).to.equal(log[0].eventId);
    // Another project sees none of it.
    expect((await other.req('GET', `/webhooks/${hook}/deliveries`)).status).to.equal(404);
    expect((await other.req('POST', `/webhooks/${hook}/deliveries/${log[0].id}/redeliver`)).status).to.equal(404);
  });

  it('retries a receiver that fails until it recovers, with backoff, the same id and body each time, every attempt logged', async () => {
    const r = await receiver();
    r.answer = (x) => (x.nth <= 2 ? 500 : 204);
    const p = await project();
    const hook = await p.make('/webhooks', { url: r.url, events: ['bug.created'] });
    await p.make('/bugs', { title: 'Flaky receiver' });
    await r.waitFor('a success', (all) => all.some((x) => x.status === 204));
    expect(r.received.map((x) => x.status)).to.deep.equal([500, 500, 204]);
    expect(new Set(r.received.map((x) => x.id)).size).to.equal(1);
    expect(new Set(r.received.map((x) => x.body)).size).to.equal(1);
    const [delivery] = await eventually(async () => {
      const items = await p.deliveries(hook);
      expect(items[0].status).to.equal('succeeded');
      return items;
    });
    expect(delivery).to.include({ attempts: 3, lastStatusCode: 204, lastError: null });
    expect(delivery.attemptLog.map((a: any) => [a.statusCode, a.error])).to.deep.equal([
      [500, 'answered 500'],
      [500, 'answered 500'],
      [204, null],
    ]);
    const at = delivery.attemptLog.map((a: any) => Date.parse(a.attemptedAt));
    // Waits of 100 ms then 200 ms, jittered by at most 20 %.
    expect(at[1] - at[0]).to.be.at.least(80);
    expect(at[2] - at[1]).to.be.at.least(160);
  });

  it('disables a webhook after sustained failure, with the reason; re-enabled, a redelivery goes out with the same id', async () => {
    const r = await receiver();
    r.answer = () => 503;
    const p = await project();
    const hook = await p.make('/webhooks', { url: r.url, events: ['bug.created', 'bug.updated'] });
    const bug = await p.make('/bugs', { title: 'Down receiver' });
    await r.waitFor('three attempts', (all) => all.length >= 3);
    const disabled = await eventually(async () => {
      const res = await p.req('GET', `/webhooks/${hook}`);
      expect(res.body.active).to.equal(false);
      return res.body;
    });
    expect(disabled.disabledReason).to.match(/^Disabled after 3 failed attempts in a row .*answered 503$/);
    expect(disabled.disabledAt).to.be.a('string');
    const [delivery] = await p.deliveries(hook);
    expect(delivery).to.include({ status: 'failed', attempts: 3, lastStatusCode: 503 });

    // Disabled: changes are not queued for it, and a redelivery is refused until it is enabled.
    await p.req('PATCH', `/bugs/${bug}`, { title: 'Still down' });
    expect(await p.deliveries(hook)).to.have.length(1);
    const refused = await p.req('POST', `/webhooks/${hook}/deliveries/${delivery.id}/redeliver`);
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('CONFLICT');

    r.answer = () => 200;
    const enabled = await p.req('PATCH', `/webhooks/${hook}`, { active: true });
    expect(enabled.body.active).to.equal(true);
    expect(enabled.body).to.not.have.property('disabledReason');
    const again = await p.req('POST', `/webhooks/${hook}/deliveries/${delivery.id}/redeliver`);
    expect(again.status).to.equal(202);
    expect(again.body).to.include({ id: delivery.id, status: 'pending' });
    const redelivered = await r.one('the redelivery', (x) => x.status === 200);
    expect(redelivered.id).to.equal(delivery.eventId);
    expect(redelivered.body).to.equal(r.received[0].body);
    await eventually(async () =>
      expect((await p.deliveries(hook))[0]).to.include({ status: 'succeeded', attempts: 4 }),
    );
    expect((await p.req('POST', `/webhooks/${hook}/deliveries/whd_unknown/redeliver`)).status).to.equal(404);
  });

  it('rotates the secret: both sign during the grace period, then only the new one', async () => {
    const r = await receiver();
    const p = await project();
    const first = 's'.repeat(24); // not a whsec_ secret: its UTF-8 bytes are the key
    const hook = await p.make('/webhooks', { url: r.url, events: ['note.created'], secret: first });
    const rotated = await p.req('POST', `/webhooks/${hook}/rotate-secret`, {});
    expect(rotated.status).to.equal(200);
    const second = rotated.body.secret as string;
    expect(second).to.match(/^whsec_/);
    expect(Date.parse(rotated.body.previousSecretExpiresAt)).to.be.greaterThan(Date.now());
    expect((await p.req('GET', `/webhooks/${hook}`)).body).to.not.have.property('secret');

    await p.make('/notes', { content: 'during the grace period' });
    const during = await r.one('a note', () => true);
    expect(during.signature.split(' ')).to.have.length(2);
    expect(verifies(during, second)).to.equal(true);
    expect(verifies(during, first)).to.equal(true);

    const third = `whsec_${Buffer.from('c'.repeat(32)).toString('base64')}`;
    const ended = await p.req('POST', `/webhooks/${hook}/rotate-secret`, { secret: third, graceSeconds: 0 });
    expect(ended.body).to.deep.equal({ id: hook, secret: third, previousSecretExpiresAt: null });
    await p.make('/notes', { content: 'after' });
    await r.waitFor('a second note', (all) => all.length >= 2);
    const after = r.received[1];
    expect(after.signature.split(' ')).to.have.length(1);
    expect(verifies(after, third)).to.equal(true);
    expect(verifies(after, second)).to.equal(false);
  });

  it('two services on one database never send one delivery twice at the same time', async function () {
    this.timeout(20_000);
    // Services of their own: here every first attempt fails, which must not disable the webhook.
    const first = await startTestService({ webhooks: { ...fastDelivery, disableAfterFailures: 1_000 } });
    const second = await startService({ ...first.service.config, bootstrapKey: undefined }, createLogger('silent'));
    try {
      const r = await receiver();
      // Each first attempt fails after a moment, so retries are up for grabs by either process.
      r.answer = async (x) => {
        await new Promise((resolve) => setImmediate(resolve));
        return x.nth === 1 ? 500 : 200;
      };
      const p = await project(first);
      const hook = await p.make('/webhooks', { url: r.url, events: ['memory.created'] });
      const count = 30;
      await Promise.all(Array.from({ length: count }, (_, i) => p.make('/memories', { content: `memory ${i}` })));
      await r.waitFor(`${count} deliveries`, () => r.delivered().size === count, 15_000);
      expect(r.maxConcurrentPerId).to.equal(1);
      for (const [id, ok] of r.delivered()) expect(ok, id).to.have.length(1);
      expect(r.received).to.have.length(2 * count);
      const senders = await first.service
        .db('webhook_attempts as a')
        .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .where('d.webhook_id', hook)
        .distinct('a.instance_id')
        .pluck('a.instance_id');
      expect(senders.length, 'both processes delivered').to.equal(2);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});

describe('Webhook targets on private addresses, when the service does not allow them', () => {
  let t: TestService;
  let r: WebhookReceiver;
  before(async () => {
    t = await startTestService({ webhooks: { ...fastDelivery, allowPrivateTargets: false } });
    r = await WebhookReceiver.start();
  });
  after(async () => {
    await r?.close();
    await t?.stop();
  });

  it('refuses them when a subscription is written, naming the url', async () => {
    for (const url of [
      r.url,
      'http://localhost:9/x',
      'http://10.0.0.1/',
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data',
    ]) {
      const res = await t.request('POST', '/webhooks', { body: { url, events: ['*'] } });
      expect(res.status, url).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details.fields[0].field).to.equal('body.url');
    }
    const ok = await t.request('POST', '/webhooks', { body: { url: 'https://8.8.8.8/hook', events: ['bug.created'] } });
    expect(ok.status).to.equal(201);
    const moved = await t.request('PATCH', `/webhooks/${ok.body.id}`, { body: { url: 'http://127.0.0.1/' } });
    expect(moved.status).to.equal(400);
  });

  it('refuses them at delivery, after resolving the name, and sends nothing', async () => {
    const ok = await t.request('POST', '/webhooks', {
      body: { url: 'https://8.8.4.4/hook', events: ['note.created'] },
    });
    expect(ok.status).to.equal(201);
    // As if its name now resolved to this host: written behind the API's back.
    const url = r.url.replace('127.0.0.1', 'localhost');
    await t.service
      .db('artifacts')
      .where('id', ok.body.id)
      .update({ data: t.service.db.raw(`data || jsonb_build_object('url', ?::text)`, [url]) });
    await t.request('POST', '/notes', { body: { content: 'for nobody' } });
    const [delivery] = await eventually(async () => {
      const items = (await t.request('GET', `/webhooks/${ok.body.id}/deliveries`)).body.items;
      expect(items[0]?.attemptLog).to.have.length.at.least(1);
      return items;
    });
    expect(delivery.status).to.equal('pending');
    expect(delivery.attemptLog[0].statusCode).to.equal(null);
    expect(delivery.attemptLog[0].error).to.match(/^localhost resolves to a loopback address;/);
    expect(delivery.attemptLog[0].error).not.to.match(/127\.0\.0\.1|::1/);
    expect(r.received).to.have.length(0);
  });
});

describe('Webhook dispatcher with nothing to send', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ webhooks: fastDelivery });
  });
  after(async () => {
    await t?.stop();
  });

  it('knows when nothing is pending: no due time, so an idle dispatcher waits for a notice or its poll', async () => {
    const store = new DeliveryStore(t.service.db);
    expect(await store.nextDueInMs()).to.equal(null);
    const hook = await t.request('POST', '/webhooks', {
      body: { url: 'https://8.8.8.8/idle', events: ['note.created'] },
    });
    expect(hook.status).to.equal(201);
    // A delivery due in an hour, written without a notice so that no dispatcher takes it meanwhile.
    const { tenant_id: tenantId, project_id: projectId } = await t.service
      .db('artifacts')
      .where('id', hook.body.id)
      .first('tenant_id', 'project_id');
    await t.service
      .db('webhook_events')
      .insert({ id: 'evt_idle', tenant_id: tenantId, project_id: projectId, type: 'note.created', body: '{}' });
    await t.service.db('webhook_deliveries').insert({
      id: 'whd_idle',
      event_id: 'evt_idle',
      webhook_id: hook.body.id,
      project_id: projectId,
      next_attempt_at: t.service.db.raw(`now() + interval '1 hour'`),
    });
    expect(await store.nextDueInMs()).to.be.within(3_590_000, 3_600_000);
    await t.service.db('webhook_events').where('id', 'evt_idle').del();
    expect(await store.nextDueInMs()).to.equal(null);
  });
});
