import { expect } from 'chai';
import pg from 'pg';
import { DedicatedConnection } from '../../src/db/dedicated-connection.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('DedicatedConnection (the hot statements connection of its own)', () => {
  let database: TestDatabase;
  let admin: pg.Client;
  before(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await database?.drop();
  });

  const statement = (values: unknown[]) => ({
    name: 'dedicated_spec_add',
    text: 'SELECT $1::int + $2::int AS sum',
    values,
  });
  const backends = async (name: string) =>
    (await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [name])).rows.map(
      (r) => r.pid as number,
    );

  it('runs statements made at once one after the other on one connection, prepared once', async () => {
    const connection = new DedicatedConnection(database.url, 'dedicated-spec-one', () => {});
    try {
      const sums = await Promise.all(
        [1, 2, 3].map(async (n) => (await connection.query(statement([n, 10]))).rows[0].sum),
      );
      expect(sums).to.deep.equal([11, 12, 13]);
      expect(await backends('dedicated-spec-one')).to.have.length(1);
      const prepared = await connection.query({
        text: 'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = $1',
        values: ['dedicated_spec_add'],
      });
      expect(prepared.rows[0].n).to.equal(1);
    } finally {
      await connection.end();
    }
  });

  it('with customPlans, plans every execution for its own parameters, never with a generic plan', async () => {
    const connection = new DedicatedConnection(database.url, 'dedicated-spec-plans', () => {}, { customPlans: true });
    try {
      // Past the five executions after which PostgreSQL would otherwise consider a generic plan.
      for (let n = 0; n < 8; n++) await connection.query(statement([n, 1]));
      const plans = await connection.query({
        text: 'SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1',
        values: ['dedicated_spec_add'],
      });
      expect(plans.rows[0]).to.deep.equal({ generic: 0, custom: 8 });
    } finally {
      await connection.end();
    }
  });

  it("without customPlans, keeps PostgreSQL's own plan cache (the run inserts' foreign-key checks stay prepared)", async () => {
    const connection = new DedicatedConnection(database.url, 'dedicated-spec-auto', () => {});
    try {
      const mode = await connection.query({ text: 'SHOW plan_cache_mode' });
      expect(mode.rows[0].plan_cache_mode).to.equal('auto');
    } finally {
      await connection.end();
    }
  });

  it('opens a new connection after its backend is gone, and prepares the statement again', async () => {
    const errors: unknown[] = [];
    const connection = new DedicatedConnection(database.url, 'dedicated-spec-lost', (err) => errors.push(err));
    try {
      expect((await connection.query(statement([1, 1]))).rows[0].sum).to.equal(2);
      const [pid] = await backends('dedicated-spec-lost');
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // The statement that meets the dead connection may fail; one after it runs on a new one.
      let sum: number | undefined;
      for (let attempt = 0; attempt < 3 && sum === undefined; attempt++) {
        sum = await connection.query(statement([2, 3])).then(
          (r) => r.rows[0].sum as number,
          () => undefined,
        );
      }
      expect(sum).to.equal(5);
      const now = await backends('dedicated-spec-lost');
      expect(now).to.have.length(1);
      expect(now[0]).to.not.equal(pid);
    } finally {
      await connection.end();
    }
  });

  it('refuses statements once ended', async () => {
    const connection = new DedicatedConnection(database.url, 'dedicated-spec-ended', () => {});
    await connection.query(statement([1, 2]));
    await connection.end();
    let refused: unknown;
    await connection.query(statement([1, 2])).catch((err) => (refused = err));
    expect(String(refused)).to.match(/closed/);
    expect(await backends('dedicated-spec-ended')).to.have.length(0);
  });
});
