// What Dispatch remembers of queued runs, against a real database (its claims find the queue empty).
// The sessions are stand-ins that publish what the engine's SessionRegistry publishes.
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { createLogger } from '../../src/log.js';
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
    ready: (s: ExecutorSession) => {
      held.set(s.id, s);
      events.emit('ready', s);
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
});
