// What Dispatch remembers of queued runs, against a real database (its claims find the queue empty).
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { createLogger } from '../../src/log.js';
import { Dispatch } from '../../src/otp/engine/dispatch.js';
import type { ExecutorSession } from '../../src/otp/engine/session.js';
import { RunStore } from '../../src/otp/store/run-store.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** What Dispatch reads of a session: its id, its project, its room. */
const session = (id: string, projectId: string) =>
  ({ id, principal: { projectId }, freeCapacity: 1, closed: false }) as unknown as ExecutorSession;

describe('Dispatch: the queued runs it has heard of', () => {
  let database: TestDatabase;
  let db: Db;
  let dispatch: Dispatch;
  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url);
    await migrate(db);
    const store = new RunStore(db);
    dispatch = new Dispatch({
      store,
      instanceId: 'ins_test',
      log: createLogger('silent'),
      draining: () => false,
      start: async () => {},
    });
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('keeps a count only for projects with a session ready here, and forgets one when its last session goes', async () => {
    // Every process hears every project's dispatch notices: one without a session here leaves nothing.
    for (let i = 0; i < 50; i++) dispatch.wakeProject(`prj_elsewhere${i}`);
    expect(dispatch.projectsHeard).to.equal(0);

    const a1 = session('ots_a1', 'prj_a');
    const a2 = session('ots_a2', 'prj_a');
    dispatch.ready(a1);
    dispatch.ready(a2);
    dispatch.wakeProject('prj_a');
    expect(dispatch.projectsHeard).to.equal(1);
    // Each claim finds the queue empty.
    expect(await dispatch.claimFor(a1)).to.equal(true);
    expect(await dispatch.claimFor(a2)).to.equal(true);

    dispatch.gone(a1);
    expect(dispatch.projectsHeard).to.equal(1);
    dispatch.gone(a2);
    expect(dispatch.projectsHeard).to.equal(0);
    expect(dispatch.serves('prj_a')).to.equal(false);
  });
});
