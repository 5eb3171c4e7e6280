// Migrations that move data or add behaviour, each walked up (and down) on a database of its own.
import { expect } from 'chai';
import pg from 'pg';
import { migrationSource } from '../../db/migrations/index.js';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';

/** A fresh, empty database for one suite (no migrations applied: each test walks them itself). */
function freshDatabase(): { db: Db; url: string } {
  const handle = {} as { db: Db; url: string };
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
    handle.url = database.url;
    handle.db = createDb(database.url);
  });
  after(async () => {
    await handle.db?.destroy();
    await database?.drop();
  });
  return handle;
}

describe('migration 003_artifacts', () => {
  const fresh = freshDatabase();
  let db: Db;
  before(() => {
    db = fresh.db;
  });

  it('moves existing test cases and plans into artifacts, and back on the way down', async () => {
    await db.migrate.up({ migrationSource }); // 001
    await db.migrate.up({ migrationSource }); // 002
    await db('tenants').insert({ id: 'ten_m', name: 't' });
    await db('projects').insert({ id: 'prj_m', tenant_id: 'ten_m', name: 'p' });
    const steps = [{ otp: { action: 'navigate', url: 'https://app.test/' }, label: 'open' }];
    await db('test_cases').insert({
      id: 'tc_m1',
      tenant_id: 'ten_m',
      project_id: 'prj_m',
      title: 'Old case',
      steps: JSON.stringify(steps),
      version: 3,
    });
    await db('test_plans').insert({
      id: 'tp_m1',
      tenant_id: 'ten_m',
      project_id: 'prj_m',
      title: 'Old plan',
      description: 'kept',
      test_case_ids: JSON.stringify(['tc_m1']),
    });

    await db.migrate.up({ migrationSource }); // 003
    const rows = await db('artifacts').orderBy('id').select('id', 'kind', 'version', 'data');
    expect(rows).to.deep.equal([
      {
        id: 'tc_m1',
        kind: 'test_case',
        version: 3,
        data: { title: 'Old case', steps, status: 'ready', priority: 'medium', labels: [] },
      },
      {
        id: 'tp_m1',
        kind: 'test_plan',
        version: 1,
        data: { title: 'Old plan', description: 'kept', testCaseIds: ['tc_m1'], status: 'active', labels: [] },
      },
    ]);
    expect((await db('project_usage').where('project_id', 'prj_m').first()).artifacts).to.equal(2);
    expect(await db.schema.hasTable('test_cases')).to.equal(false);

    await db.migrate.down({ migrationSource });
    const cases = await db('test_cases').select('id', 'title', 'steps', 'version');
    expect(cases).to.deep.equal([{ id: 'tc_m1', title: 'Old case', steps, version: 3 }]);
    const plans = await db('test_plans').select('id', 'description', 'test_case_ids');
    expect(plans).to.deep.equal([{ id: 'tp_m1', description: 'kept', test_case_ids: ['tc_m1'] }]);
    expect(await db.schema.hasTable('artifacts')).to.equal(false);
    // And up again, as a deploy after a rollback would.
    await db.migrate.up({ migrationSource });
    expect(await db('artifacts').count({ n: '*' }).first()).to.deep.equal({ n: 2 });
  });
});

describe('migration 004_asset_revisions', () => {
  const fresh = freshDatabase();
  let db: Db;
  before(() => {
    db = fresh.db;
  });

  it('starts existing buckets and assets at revision 1, and drops the revisions on the way down', async () => {
    for (let i = 0; i < 3; i++) await db.migrate.up({ migrationSource }); // 001-003
    await db('tenants').insert({ id: 'ten_r', name: 't' });
    await db('projects').insert({ id: 'prj_r', tenant_id: 'ten_r', name: 'p' });
    await db('asset_buckets').insert({
      id: 'bkt_r',
      tenant_id: 'ten_r',
      project_id: 'prj_r',
      name: 'kept',
      driver: 'fs',
    });
    await db('assets').insert({
      id: 'ast_r',
      tenant_id: 'ten_r',
      project_id: 'prj_r',
      bucket_id: 'bkt_r',
      name: 'a.txt',
      size: 3,
      content_type: 'text/plain',
      sha256: '0'.repeat(64),
      storage_provider: 'fs',
      storage_key: 'ten_r/prj_r/ast_r',
    });

    await db.migrate.up({ migrationSource }); // 004
    expect(await db('asset_buckets').select('id', 'version')).to.deep.equal([{ id: 'bkt_r', version: 1 }]);
    expect(await db('assets').select('id', 'version')).to.deep.equal([{ id: 'ast_r', version: 1 }]);

    await db.migrate.down({ migrationSource });
    expect(await db.schema.hasColumn('asset_buckets', 'version')).to.equal(false);
    expect(await db.schema.hasColumn('assets', 'version')).to.equal(false);
    expect(await db('assets').select('id', 'name')).to.deep.equal([{ id: 'ast_r', name: 'a.txt' }]);
  });
});

describe('migration 005_run_view_notices', () => {
  const fresh = freshDatabase();
  let db: Db;
  before(() => {
    db = fresh.db;
  });

  it("tells listeners of every change to a run's evidence files, and of nothing else; down stops it", async () => {
    for (let i = 0; i < 5; i++) await db.migrate.up({ migrationSource }); // 001-005
    await db('tenants').insert({ id: 'ten_n', name: 't' });
    await db('projects').insert({ id: 'prj_n', tenant_id: 'ten_n', name: 'p' });
    await db('asset_buckets').insert({ id: 'bkt_n', tenant_id: 'ten_n', project_id: 'prj_n', name: 'b', driver: 'fs' });
    for (const id of ['otr_a', 'otr_b']) {
      await db('otp_runs').insert({
        id,
        tenant_id: 'ten_n',
        project_id: 'prj_n',
        status: 'passed',
        test_cases: '[]',
        total_steps: 1,
      });
    }
    const asset = (id: string, runId: string | null) => ({
      id,
      tenant_id: 'ten_n',
      project_id: 'prj_n',
      bucket_id: 'bkt_n',
      name: `${id}.png`,
      size: 1,
      content_type: 'image/png',
      sha256: '0'.repeat(64),
      storage_provider: 'fs',
      storage_key: `k/${id}`,
      run_id: runId,
      step_index: runId ? 0 : null,
    });

    const listener = new pg.Client({ connectionString: fresh.url });
    await listener.connect();
    const heard: unknown[] = [];
    listener.on('notification', (msg) => heard.push(JSON.parse(msg.payload ?? 'null')));
    await listener.query('LISTEN otp_events');
    /** What was heard by the time a marker sent after `change` arrives (notices keep their order). */
    const noticesOf = async (change: () => Promise<unknown>) => {
      heard.length = 0;
      await change();
      await db.raw(`SELECT pg_notify('otp_events', '"marker"')`);
      await eventually(async () => expect(heard).to.include('marker'));
      return heard.filter((n) => n !== 'marker');
    };
    try {
      expect(await noticesOf(() => db('assets').insert(asset('ast_1', 'otr_a')))).to.deep.equal([
        { kind: 'run-view', runId: 'otr_a' },
      ]);
      expect(await noticesOf(() => db('assets').insert(asset('ast_2', null)))).to.deep.equal([]);
      expect(await noticesOf(() => db('assets').where('id', 'ast_1').update({ name: 'renamed.png' }))).to.deep.equal([
        { kind: 'run-view', runId: 'otr_a' },
      ]);
      expect(await noticesOf(() => db('assets').where('id', 'ast_1').update({ run_id: 'otr_b' }))).to.deep.equal([
        { kind: 'run-view', runId: 'otr_a' },
        { kind: 'run-view', runId: 'otr_b' },
      ]);
      expect(await noticesOf(() => db('assets').where('id', 'ast_2').update({ name: 'other.png' }))).to.deep.equal([]);
      expect(await noticesOf(() => db('assets').where('id', 'ast_1').delete())).to.deep.equal([
        { kind: 'run-view', runId: 'otr_b' },
      ]);

      await db.migrate.down({ migrationSource });
      expect(await noticesOf(() => db('assets').insert(asset('ast_3', 'otr_a')))).to.deep.equal([]);
    } finally {
      await listener.end();
    }
  });
});

describe('migrate: several processes starting at once on a new database', () => {
  const fresh = freshDatabase();

  it('one migrates, the others wait for it and find the schema ready', async () => {
    // Each its own pool, as separate processes would have.
    const others = [createDb(fresh.url), createDb(fresh.url), createDb(fresh.url)];
    try {
      const outcomes = await Promise.allSettled([fresh.db, ...others].map((db) => migrate(db)));
      expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).to.deep.equal([
        'ok',
        'ok',
        'ok',
        'ok',
      ]);
      const [done] = await fresh.db.migrate.list({ migrationSource });
      expect(done.length).to.equal((await migrationSource.getMigrations([])).length);
      // Each migration applied once.
      const names = (await fresh.db('knex_migrations').select('name')).map((r: { name: string }) => r.name);
      expect(new Set(names).size).to.equal(names.length);
    } finally {
      await Promise.all(others.map((db) => db.destroy()));
    }
  });
});
