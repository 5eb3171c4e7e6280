// A run committed while a claim is under way is either answered by that claim or left queued: never
// marked running with nobody told (the claim statement's own snapshot predates the run; the claim
// function's statements see it). Made deterministic by holding the claim inside the function: the
// posting transaction locks otp_queue_groups, the claim's first statement there waits for it, and the
// post commits while the claim waits.
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { CLAIM_QUEUE } from '../../src/otp/store/run-sql.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';

const PROJECT = 'prj_snapshot';
const POLICY = JSON.stringify({ batchToNormalMs: 600_000, normalToGateMs: 1_800_000, gateCap: 2 });

describe('queue claim: a run posted while a claim waits', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { max: 4 });
    await migrate(db);
    await db.raw(`INSERT INTO tenants (id, name) VALUES ('ten_snapshot', 'snapshot')`);
    await db.raw(`INSERT INTO projects (id, tenant_id, name) VALUES (?, 'ten_snapshot', 'snapshot')`, [PROJECT]);
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('is answered by the claim that took it', async () => {
    const post = await db.transaction();
    let claimed: Array<{ id: string }> | undefined;
    try {
      await post.raw(
        `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, queue_owner, queue_group)
         VALUES ('otr_snapshot', 'ten_snapshot', ?, 'queued', '[]', 0, 'key_a', 'key_a')`,
        [PROJECT],
      );
      await post.raw('LOCK TABLE otp_queue_groups IN EXCLUSIVE MODE');
      // The claim begins (its statement's snapshot without the run) and waits inside the function.
      const claim = db
        .raw(CLAIM_QUEUE.knexText, [PROJECT, ['ots_1'], [1], 'ins_1', POLICY, []])
        .then((result: { rows: Array<{ id: string }> }) => (claimed = result.rows));
      await eventually(async () => {
        const { rows } = await db.raw(
          `SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'otp_queue_groups'::regclass AND NOT granted`,
        );
        expect(rows[0].n).to.be.greaterThan(0);
      });
      await post.commit();
      await claim;
    } finally {
      if (!post.isCompleted()) await post.rollback();
    }
    const row = await db('otp_runs').where('id', 'otr_snapshot').first('status', 'session_id');
    if (row.status === 'running') {
      expect(row.session_id).to.equal('ots_1');
      expect(claimed?.map((r) => r.id)).to.deep.equal(['otr_snapshot']);
    } else {
      expect(row.status).to.equal('queued');
      expect(claimed).to.deep.equal([]);
    }
  });

  it('a claim that meets the accounts another claim holds waits for it, and takes the next run', async () => {
    const project = 'prj_waits';
    await db.raw(`INSERT INTO projects (id, tenant_id, name) VALUES (?, 'ten_snapshot', 'waits')`, [project]);
    for (const id of ['otr_wait_1', 'otr_wait_2'])
      await db.raw(
        `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, queue_owner, queue_group)
         VALUES (?, 'ten_snapshot', ?, 'queued', '[]', 0, 'key_b', 'key_b')`,
        [id, project],
      );
    // The first claim holds the owner's and group's rows in a transaction still open.
    const first = await db.transaction();
    let second: Array<{ id: string }> | undefined;
    try {
      const taken = await first.raw(CLAIM_QUEUE.knexText, [project, ['ots_1'], [1], 'ins_1', POLICY, []]);
      expect(taken.rows.map((r: { id: string }) => r.id)).to.deep.equal(['otr_wait_1']);
      const claim = db
        .raw(CLAIM_QUEUE.knexText, [project, ['ots_2'], [1], 'ins_2', POLICY, []])
        .then((result: { rows: Array<{ id: string }> }) => (second = result.rows));
      // It waits (skipping them, it found nothing to take while a run waited).
      await eventually(async () => {
        const { rows } = await db.raw(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE NOT l.granted AND a.query LIKE '%otp_queue_claim%'`,
        );
        expect(rows[0].n).to.be.greaterThan(0);
      });
      expect(second).to.equal(undefined);
      await first.commit();
      await claim;
    } finally {
      if (!first.isCompleted()) await first.rollback();
    }
    expect(second?.map((r) => r.id)).to.deep.equal(['otr_wait_2']);
  });
});
