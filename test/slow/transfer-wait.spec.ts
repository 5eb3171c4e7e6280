// The asker of a session transfer (src/otp/engine/transfers.ts) tells a busy holder from a gone one:
// a holder that acknowledged the ask is waited for past the 5 s given to one that says nothing (a
// draining process answers thousands of asks in turn), and so is one that heart-beats, acknowledged or
// not. The test plays the holder over the notices (and its heartbeat row).
import { expect } from 'chai';
import pg from 'pg';
import { newId } from '../../src/ids.js';
import { TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

describe('OTP: a session transfer waits for a holder that acknowledged', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ otp: { resumeWindowMs: 30_000 } });
  });
  after(async () => t?.stop());

  /** A session of a new project that another process (`holder`) holds: its row, copied from a real one. */
  async function sessionHeldBy(holder: string) {
    const { key } = await t.newProject('admin');
    const first = await TestExecutor.connect(t.otpUrl, { key });
    const real = (await first.hello()).payload.sessionId as string;
    first.close();
    const row = await t.service.db('otp_sessions').where({ id: real }).first();
    const sessionId = newId('ots');
    await t.service.db('otp_sessions').insert({ ...row, id: sessionId, instance_id: holder, status: 'open' });
    return { key, sessionId };
  }

  async function listen(onAsk: (sessionId: string, client: pg.Client) => void) {
    const client = new pg.Client({ connectionString: t.database.url });
    await client.connect();
    client.on('notification', (msg) => {
      const notice = JSON.parse(msg.payload ?? '{}');
      if (notice.kind === 'handoff' && notice.holder.startsWith('test-holder')) onAsk(notice.sessionId, client);
    });
    await client.query('LISTEN otp_events');
    return client;
  }
  const say = (client: pg.Client, notice: object) =>
    client.query('SELECT pg_notify($1, $2)', ['otp_events', JSON.stringify({ ...notice, from: 'test-holder' })]);

  /**
   * The executor resumes a session `holderId` holds, which answers (acknowledging the ask at once when
   * `acknowledge`) after `answerMs`: the welcome must come, and no sooner.
   */
  async function resumesOnceAnswered(holderId: string, answerMs: number, acknowledge: boolean): Promise<void> {
    const { key, sessionId } = await sessionHeldBy(holderId);
    const to = t.service.instanceId;
    const holder = await listen(async (asked, client) => {
      if (acknowledge) await say(client, { kind: 'handoff-ack', sessionIds: [asked], to });
      await new Promise((resolve) => setTimeout(resolve, answerMs));
      await t.service.db('otp_sessions').where({ id: asked }).update({ instance_id: to });
      await say(client, { kind: 'handed-off', sessionId: asked, to, ok: true });
    });
    try {
      const back = await TestExecutor.connect(t.otpUrl, { key });
      const asked = Date.now();
      back.send('hello', { executor: 'runner', capabilities: {}, resumeSessionId: sessionId });
      const welcome = await back.next('welcome', () => true, answerMs + 8_000);
      expect(welcome.payload).to.deep.include({ sessionId, resumed: true });
      expect(Date.now() - asked).to.be.at.least(answerMs);
      back.close();
    } finally {
      await holder.end();
    }
  }

  it('resumes once a holder that acknowledged at once answers after 6 s', async () => {
    await resumesOnceAnswered('test-holder-1', 6_000, true);
  });

  it('refuses the resume when the holder says nothing for 5 s', async () => {
    const { key, sessionId } = await sessionHeldBy('test-holder-2');
    let asks = 0;
    const holder = await listen(() => asks++);
    try {
      const back = await TestExecutor.connect(t.otpUrl, { key });
      back.send('hello', { executor: 'runner', capabilities: {}, resumeSessionId: sessionId });
      expect((await back.next('error', () => true, 10_000)).payload.message).to.include(
        `session ${sessionId} cannot be resumed`,
      );
      expect(asks).to.equal(1);
      back.close();
    } finally {
      await holder.end();
    }
  });

  it('waits for a holder that says nothing while it heart-beats, and resumes when it answers', async () => {
    const holderId = `test-holder-3-${newId('ins')}`;
    const beat = () =>
      t.service.db.raw(
        `INSERT INTO service_instances (id, hostname, pid, heartbeat_at) VALUES (?, 'test', 1, now())
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
        [holderId],
      );
    await beat();
    const beating = setInterval(() => void beat(), 1_000);
    try {
      // No acknowledgement: the holder answers after 7 s (a process too busy to acknowledge in time).
      await resumesOnceAnswered(holderId, 7_000, false);
    } finally {
      clearInterval(beating);
      await t.service.db('service_instances').where({ id: holderId }).delete();
    }
  });
});
