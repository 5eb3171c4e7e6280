// 003_artifacts moves test cases and plans into the artifacts table without losing any; down moves them back.
import { expect } from 'chai';
import { createDb, type Db } from '../../src/db/connect.js';
import { migrationSource } from '../../db/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** A fresh, empty database for one suite (no migrations applied: each test walks them itself). */
function freshDatabase(): { db: Db } {
  const handle = {} as { db: Db };
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
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
    await db('test_cases').insert({ id: 'tc_m1', tenant_id: 'ten_m', project_id: 'prj_m', title: 'Old case', steps: JSON.stringify(steps), version: 3 });
    await db('test_plans').insert({ id: 'tp_m1', tenant_id: 'ten_m', project_id: 'prj_m', title: 'Old plan', description: 'kept', test_case_ids: JSON.stringify(['tc_m1']) });

    await db.migrate.up({ migrationSource }); // 003
    const rows = await db('artifacts').orderBy('id').select('id', 'kind', 'version', 'data');
    expect(rows).to.deep.equal([
      { id: 'tc_m1', kind: 'test_case', version: 3, data: { title: 'Old case', steps, status: 'ready', priority: 'medium', labels: [] } },
      { id: 'tp_m1', kind: 'test_plan', version: 1, data: { title: 'Old plan', description: 'kept', testCaseIds: ['tc_m1'], status: 'active', labels: [] } },
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
    await db('asset_buckets').insert({ id: 'bkt_r', tenant_id: 'ten_r', project_id: 'prj_r', name: 'kept', driver: 'fs' });
    await db('assets').insert({
      id: 'ast_r', tenant_id: 'ten_r', project_id: 'prj_r', bucket_id: 'bkt_r', name: 'a.txt', size: 3,
      content_type: 'text/plain', sha256: '0'.repeat(64), storage_provider: 'fs', storage_key: 'ten_r/prj_r/ast_r',
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
