import { expect } from 'chai';
import pg from 'pg';
import { createDb, type Db } from '../../src/db/connect.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { freePort } from '../../src/free-port.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('isDatabaseUnavailable (an outage, not a failing statement)', () => {
  let database: TestDatabase;
  let db: Db;
  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { max: 2 });
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('is true for a query through knex to a closed port (a socket refusal), on 127.0.0.1 and on localhost', async () => {
    const port = await freePort();
    for (const host of ['127.0.0.1', 'localhost']) {
      const closed = createDb(`postgres://postgres@${host}:${port}/nothing`, { max: 1 });
      try {
        const err = await failure(closed.raw('select 1'));
        expect(isDatabaseUnavailable(err), String(err)).to.equal(true);
      } finally {
        await closed.destroy();
      }
    }
  });

  it('is true for a statement whose connection pg_terminate_backend ends, and for the next use of that client', async () => {
    const client = new pg.Client({ connectionString: database.url });
    client.on('error', () => {});
    await client.connect();
    const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    const sleeping = failure(client.query('select pg_sleep(30)'));
    // Wait until the statement runs on the server, then end its backend.
    for (;;) {
      const { rows } = await db.raw(
        "select count(*)::int as n from pg_stat_activity where pid = ? and state = 'active'",
        [pid],
      );
      if (rows[0].n === 1) break;
    }
    await db.raw('select pg_terminate_backend(?)', [pid]);
    const err = await sleeping;
    expect(isDatabaseUnavailable(err), String(err)).to.equal(true);
    const next = await failure(client.query('select 1'));
    expect(isDatabaseUnavailable(next), String(next)).to.equal(true);
  });

  it('is true for a knex query whose pooled connection was terminated (knex prefixes the SQL to the message)', async () => {
    const sleeping = failure(db.raw('select pg_sleep(30), pg_backend_pid()'));
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      for (;;) {
        const { rows } = await admin.query(
          "select pid from pg_stat_activity where query like 'select pg_sleep(30)%' and state = 'active' and datname = current_database()",
        );
        if (rows.length) {
          await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
          break;
        }
      }
    } finally {
      await admin.end();
    }
    const err = await sleeping;
    expect(isDatabaseUnavailable(err), String(err)).to.equal(true);
  });

  it("is true for knex's time-out acquiring a connection, and when the outage is another error's cause", async () => {
    const port = await freePort();
    // A listener that accepts and never answers: connect hangs until knex gives up.
    const net = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    const hanging = createDb(`postgres://postgres@127.0.0.1:${port}/nothing`, { max: 1, acquireTimeoutMs: 200 });
    try {
      const err = await failure(hanging.raw('select 1'));
      expect((err as Error).name).to.equal('KnexTimeoutError');
      expect(isDatabaseUnavailable(err)).to.equal(true);
      expect(
        isDatabaseUnavailable(new Error('could not save', { cause: new Error('wrapped', { cause: err }) })),
      ).to.equal(true);
    } finally {
      // The pending connect ends when its socket does; only then can the pool be destroyed.
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await hanging.destroy();
    }
  });

  it('is false for errors of the statement (syntax, constraint, missing table, cancelled, knex query time-out)', async () => {
    await db.raw('create table unavailable_spec (id int primary key)');
    await db('unavailable_spec').insert({ id: 1 });
    const statementErrors = [
      await failure(db.raw('selec 1')),
      await failure(db('unavailable_spec').insert({ id: 1 })),
      await failure(db('no_such_table').select()),
      await failure(db.raw('select pg_sleep(5)').timeout(50, { cancel: true })),
      await failure(db.raw("select 'x'::int")),
    ];
    for (const err of statementErrors) expect(isDatabaseUnavailable(err), String(err)).to.equal(false);
    expect(isDatabaseUnavailable(undefined)).to.equal(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).to.equal(false);
    const cyclic = new Error('cyclic') as Error & { cause?: unknown };
    cyclic.cause = cyclic;
    expect(isDatabaseUnavailable(cyclic)).to.equal(false);
  });
});
