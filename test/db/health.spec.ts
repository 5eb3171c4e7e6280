// DatabaseHealth against a real PostgreSQL behind a relay the test cuts: an outage is spoken of once
// as it begins and once as it ends, writers wait for the database and go on together, and the quiet
// logger leaves outages to it while passing every other error through.
import { expect } from 'chai';
import { createDb, type Db } from '../../src/db/connect.js';
import { DatabaseHealth } from '../../src/db/health.js';
import type { Logger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

describe('DatabaseHealth (a real PostgreSQL behind a relay)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const log: Logger = {
    info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
    debug: () => {},
    error: (msg, fields) => lines.push({ level: 'error', msg, fields }),
  };

  before(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    db = createDb(proxy.via(database.url), { max: 2 });
  });
  after(async () => {
    await db?.destroy();
    await proxy?.close();
    await database?.drop();
  });

  it('tells an outage once, holds the writers, and lets them go on together when the database is back', async () => {
    const health = new DatabaseHealth(() => db.raw('SELECT 1'), log, { probeMs: 20, maxProbeMs: 50 });
    await proxy.cut();
    const failures = await Promise.all(
      [1, 2, 3].map(() =>
        db.raw('SELECT 1').then(
          () => null,
          (err: unknown) => err,
        ),
      ),
    );
    expect(failures.every((err) => err !== null)).to.equal(true);
    expect(failures.map((err) => health.report(err))).to.deep.equal([true, true, true]);
    expect(health.available).to.equal(false);
    const release = health.hold();
    let waited = 0;
    const writers = Promise.all([health.whenAvailable(), health.whenAvailable()]).then(() => (waited = 2));
    expect(health.stats()).to.include({ available: false, outages: 1, heldRuns: 1 });
    // A failing statement is no outage: not counted, left to its caller.
    expect(health.report(Object.assign(new Error('duplicate key value'), { code: '23505' }))).to.equal(false);

    await proxy.restore();
    await writers;
    expect(waited).to.equal(2);
    health.retriedWrite();
    release();
    expect(health.available).to.equal(true);
    expect(health.stats()).to.include({ available: true, outages: 1, heldRuns: 0, retriedWrites: 1 });
    expect(lines.map((l) => [l.level, l.msg])).to.deep.equal([
      ['error', 'database unavailable'],
      ['info', 'database available again'],
    ]);
    expect(lines[1]!.fields).to.include({ runsHeld: 1 });
    expect(lines[1]!.fields!.outageMs).to.be.a('number');
    // The cause is a code, never a message (a message names the server's address).
    expect(JSON.stringify(lines)).to.not.include(String(proxy.port));
    health.stop();
  });

  it('the quiet logger reports an outage to the health instead of logging it, and logs any other error', async () => {
    lines.length = 0;
    const health = new DatabaseHealth(() => db.raw('SELECT 1'), log, { probeMs: 20, maxProbeMs: 50 });
    const quiet = health.quiet(log);
    await proxy.cut();
    const err = await db.raw('SELECT 1').then(
      () => null,
      (e: unknown) => e,
    );
    quiet.error('heartbeat failed', { err });
    quiet.error('heartbeat failed', { err });
    quiet.error('something else broke', { err: new Error('a bug') });
    await proxy.restore();
    await health.whenAvailable();
    expect(lines.map((l) => l.msg)).to.deep.equal([
      'database unavailable',
      'something else broke',
      'database available again',
    ]);
    health.stop();
  });
});
