// The AI allowance shared by processes: two quotas on their own connection pools (as two service
// processes have) charge one tenant at once; exactly the allowance is granted, and a refusal writes
// nothing. Real PostgreSQL.
import { expect } from 'chai';
import { AiQuota, renewalOf } from '../../src/ai/quota/ai-quota.js';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { AppError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('ai: the monthly quota, shared across processes', () => {
  let database: TestDatabase;
  let dbs: Db[];
  before(async () => {
    database = await createTestDatabase();
    dbs = [createDb(database.url), createDb(database.url)];
    await migrate(dbs[0]!);
    await dbs[0]!.raw(`INSERT INTO tenants (id, name, tier) VALUES ('ten_a', 'a', 'free'), ('ten_b', 'b', 'pro')`);
    await dbs[0]!.raw(
      `INSERT INTO projects (id, tenant_id, name) VALUES ('prj_a1', 'ten_a', 'a1'), ('prj_a2', 'ten_a', 'a2'), ('prj_b', 'ten_b', 'b')`,
    );
  });
  after(async () => {
    await Promise.all(dbs.map((db) => db.destroy()));
    await database.drop();
  });

  const quotaOn = (db: Db, allowance?: number) =>
    new AiQuota(
      db,
      {
        tenantOf: async (projectId) =>
          (await db('projects')
            .join('tenants', 'tenants.id', 'projects.tenant_id')
            .where('projects.id', projectId)
            .first('tenants.id as tenantId', 'tenants.tier as tier')) ?? undefined,
      },
      allowance === undefined ? {} : { aiCallsPerMonth: allowance },
    );

  it('grants exactly the allowance to charges racing from two processes, over the projects of one tenant', async () => {
    const [one, two] = [quotaOn(dbs[0]!, 20), quotaOn(dbs[1]!, 20)];
    const attempts = Array.from({ length: 50 }, (_, i) =>
      (i % 2 ? one : two).charge(i % 3 ? 'prj_a1' : 'prj_a2', 'flaky', 1).then(
        () => 'ok',
        (err) => err,
      ),
    );
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok')).to.have.length(20);
    const refusals = results.filter((r) => r !== 'ok') as AppError[];
    expect(refusals).to.have.length(30);
    for (const r of refusals) {
      expect(r.status).to.equal(402);
      expect(r.code).to.equal('ai_quota_exceeded');
      expect(r.toBody()).to.have.property('upgradeUrl');
    }
    const usage = await one.usage('prj_a2');
    expect(usage).to.include({ tier: 'free', allowance: 20, used: 20, remaining: 0 });
    expect(usage.byOperation).to.deep.equal({ flaky: 20 });
    expect(refusals[0]!.details.renewsAt).to.equal(usage.renewsAt);
  });

  it('refuses a charge that would pass the allowance, leaving the count as it was, and keeps tenants apart', async () => {
    const quota = quotaOn(dbs[0]!);
    // pro: 10,000 a month; a draft costs 10.
    await dbs[0]!('ai_usage').insert({
      tenant_id: 'ten_b',
      period_start: new Date().toISOString().slice(0, 10).replace(/\d\d$/, '01'),
      used: 9_995,
    });
    const refused = await quota.charge('prj_b', 'test_case_draft', 10).catch((err) => err as AppError);
    expect(refused).to.be.instanceOf(AppError);
    expect((await quota.usage('prj_b')).used).to.equal(9_995);
    await quota.charge('prj_b', 'flaky', 5);
    expect((await quota.usage('prj_b')).used).to.equal(10_000);
    expect((await quota.usage('prj_a1')).used).to.equal(20);
  });

  it('renews on the first of the next month, UTC', () => {
    expect(renewalOf(new Date('2026-12-31T23:59:59Z')).toISOString()).to.equal('2027-01-01T00:00:00.000Z');
    expect(renewalOf(new Date('2026-02-10T00:00:00Z')).toISOString()).to.equal('2026-03-01T00:00:00.000Z');
  });
});
