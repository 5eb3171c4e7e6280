// What Dispatch remembers of queued runs, against a real database (its claims find the queue empty).
// The sessions are stand-ins that publish what the engine's SessionRegistry publishes.
import diagnostics from 'node:diagnostics_channel';
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { createLogger } from '../../src/log.js';
import type { RunClaimMessage } from '../../src/otp/engine/diagnostics.js';
import { Dispatch } from '../../src/otp/engine/dispatch.js';
import type { RunDrivers } from '../../src/otp/engine/drivers.js';
import { Phase } from '../../src/otp/engine/phase.js';
import type { ExecutorSession } from '../../src/otp/engine/session.js';
import type { SessionRegistry } from '../../src/otp/engine/sessions.js';
import { RunStore } from '../../src/otp/store/run-store.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** What Dispatch reads of a session: its id, its project, its room. */
const session = (id: string, projectId: string) =>
  ({ id, principal: { projectId }, freeCapacity: 1, closed: false }) as unknown as ExecutorSession;

/** The registry's subscriptions and lookups, over sessions the test makes ready and gone. */
function sessionsOf() {
  const events = new EventEmitter();
  const held = new Map<string, ExecutorSession>();
  const registry = {
    on: (event: string, listener: (...args: unknown[]) => void) => events.on(event, listener),
    get: (id: string) => held.get(id),
  } as unknown as SessionRegistry;
  return {
    registry,
    /** `fresh`: its first welcome (false: resumed), as the engine publishes it. */
    ready: (s: ExecutorSession, fresh = true) => {
      held.set(s.id, s);
      events.emit('ready', s, fresh);
    },
    closed: (s: ExecutorSession) => {
      held.delete(s.id);
      events.emit('closed', s, { code: 1000, reason: 'bye' });
    },
  };
}

describe('Dispatch: the queued runs it has heard of', () => {
  let database: TestDatabase;
  let db: Db;
  let dispatch: Dispatch;
  const sessions = sessionsOf();
  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url);
    await migrate(db);
    const drivers = { on: () => () => {} } as unknown as RunDrivers;
    dispatch = new Dispatch({
      store: new RunStore(db),
      instanceId: 'ins_test',
      log: createLogger('silent'),
      phase: new Phase(),
      sessions: sessions.registry,
      drivers,
    });
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('keeps a count only for projects with a session ready here, and forgets one when its last session goes', async () => {
    // Every process hears every project's dispatch notices: one without a session here leaves nothing.
    for (let i = 0; i < 50; i++) await dispatch.waiting(`prj_elsewhere${i}`);
    expect(dispatch.projectsHeard).to.equal(0);

    const a1 = session('ots_a1', 'prj_a');
    const a2 = session('ots_a2', 'prj_a');
    sessions.ready(a1);
    sessions.ready(a2);
    // A run for any session of the project: they claim (each finds the queue empty) before it resolves.
    await dispatch.waiting('prj_a');
    expect(dispatch.projectsHeard).to.equal(1);
    expect(await dispatch.claimFor(a1)).to.equal(true);
    expect(await dispatch.waiting('prj_a', a2.id)).to.equal(true);

    sessions.closed(a1);
    expect(dispatch.projectsHeard).to.equal(1);
    sessions.closed(a2);
    expect(dispatch.projectsHeard).to.equal(0);
    expect(dispatch.serves('prj_a')).to.equal(false);
  });

  it("claims nothing for a new session once a claim found its project's queue dry, until a sign of a queued run comes after it", async () => {
    const claims: string[] = [];
    const listen = (m: unknown) => claims.push((m as RunClaimMessage).sessionId);
    diagnostics.subscribe('otp:run.claim', listen);
    const [b1, b2, b3, b4] = ['ots_b1', 'ots_b2', 'ots_b3', 'ots_b4'].map((id) => session(id, 'prj_b'));
    try {
      sessions.ready(b1!);
      expect(await dispatch.claimFor(b1!), 'the queue is dry').to.equal(true);
      claims.length = 0;
      sessions.ready(b2!);
      // A claim b2 made as it got ready would share this one's statement, or go before it (claim-batches.ts).
      await dispatch.claimFor(b1!);
      expect(claims, 'no claim for the new session').to.deep.equal(['ots_b1']);
      // A run queued for any session of the project: b2 claims as every ready session does.
      await dispatch.waiting('prj_b');
      expect(claims).to.include('ots_b2');
      // A resumed session claims whatever the project's queue was found to be (runs may be pinned to it).
      claims.length = 0;
      sessions.ready(b3!, false);
      sessions.ready(b4!);
      await dispatch.claimFor(b1!);
      expect([...claims].sort()).to.deep.equal(['ots_b1', 'ots_b3']);
    } finally {
      diagnostics.unsubscribe('otp:run.claim', listen);
      for (const s of [b1, b2, b3, b4]) sessions.closed(s!);
    }
  });
});
