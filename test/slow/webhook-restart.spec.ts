// A service stops in the middle of retries and a new one starts on the same database: every pending
// delivery goes out, with the id it had, once; a delivery leased by a process that died waits for its
// lease to run out, then goes out too.
import { expect } from 'chai';
import { createDb } from '../../src/db/connect.js';
import { createLogger } from '../../src/log.js';
import { type Service, startService } from '../../src/service.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';
import { verifies, WebhookReceiver } from '../support/webhook-receiver.js';

describe('Webhook delivery across a restart', () => {
  let t: TestService;
  let next: Service | undefined;
  let r: WebhookReceiver;
  before(async () => {
    t = await startTestService({
      webhooks: {
        retryScheduleMs: [200, 400, 800, 1600, 3200],
        jitter: 0.2,
        disableAfterFailures: 1_000,
        disableAfterMs: 0,
      },
    });
    r = await WebhookReceiver.start();
  });
  after(async () => {
    await next?.stop();
    await r?.close();
    await t.database.drop();
  });

  it('loses nothing and sends no event under a new id', async function () {
    this.timeout(30_000);
    let up = false;
    r.answer = () => (up ? 200 : 500);
    const { key } = await t.newProject('admin');
    const secret = `whsec_${Buffer.from('r'.repeat(32)).toString('base64')}`;
    const hook = (await t.request('POST', '/webhooks', { key, body: { url: r.url, events: ['bug.created'], secret } }))
      .body.id;
    const count = 5;
    for (let i = 0; i < count; i++)
      expect((await t.request('POST', '/bugs', { key, body: { title: `bug ${i}` } })).status).to.equal(201);
    await r.waitFor('a failed attempt of each event', (all) => new Set(all.map((x) => x.id)).size === count);
    const ids = new Set(r.received.map((x) => x.id));
    const bodies = new Map(r.received.map((x) => [x.id, x.body]));

    await t.service.stop(); // in the middle of the retries
    // One delivery as a process that died while sending it would leave it: leased for another second.
    const db = createDb(t.database.url);
    const [held] = await db('webhook_deliveries')
      .where('webhook_id', hook)
      .orderBy('id')
      .limit(1)
      .update({ leased_by: 'ins_dead', lease_until: db.raw(`now() + interval '1 second'`) }, [
        'event_id',
        'lease_until',
      ]);
    await db.destroy();

    up = true;
    next = await startService({ ...t.service.config }, createLogger('silent'));
    await r.waitFor('every event delivered', () => r.delivered().size === count, 20_000);
    expect(new Set(r.received.map((x) => x.id))).to.deep.equal(ids);
    for (const [id, ok] of r.delivered()) {
      expect(ok, id).to.have.length(1);
      expect(ok[0].body).to.equal(bodies.get(id));
      expect(verifies(ok[0], secret)).to.equal(true);
    }

    // The log, read from the new process: every delivery succeeded, after the failures before the stop.
    const items = await eventually(async () => {
      const res = await fetch(`${next!.restUrl}/api/v1/webhooks/${hook}/deliveries`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const page = (await res.json()).items as any[];
      expect(page.map((d) => d.status)).to.deep.equal(Array(count).fill('succeeded'));
      return page;
    });
    for (const d of items) expect(d.attemptLog.map((a: any) => a.statusCode).slice(0, 1)).to.deep.equal([500]);
    const heldLog = items.find((d) => d.eventId === held.event_id)!.attemptLog;
    expect(Date.parse(heldLog[heldLog.length - 1].attemptedAt), 'not sent before the lease ran out').to.be.at.least(
      held.lease_until.getTime(),
    );
  });
});
