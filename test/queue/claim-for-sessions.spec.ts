// One claim for several sessions (migration 074) takes what their claims one after another would:
// the same runs, for the same sessions, in the same order, and leaves the same accounts. Two projects
// hold the same queue; one is claimed session by session, the other in one statement, at one instant.
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const POLICY = JSON.stringify({ batchToNormalMs: 600_000, normalToGateMs: 1_800_000, gateCap: 1 });
const NOW = '2026-11-26T12:00:00Z';
// (owner, group, class, pinned session): gate 0, normal 1, batch 2.
const QUEUE: Array<[string, string, number, string | null]> = [
  ['key_a', 'nightly', 2, null],
  ['key_a', 'nightly', 2, null],
  ['key_a', 'pr-1', 1, null],
  ['key_a', 'pr-1', 0, null],
  ['key_a', 'pr-1', 0, null],
  ['key_b', 'key_b', 1, null],
  ['key_b', 'key_b', 1, 'ots_3'],
  ['key_b', 'key_b', 1, null],
  ['key_c', 'gate', 0, null],
  ['key_c', 'gate', 1, null],
];
const ASKS: Array<[string, number]> = [
  ['ots_1', 3],
  ['ots_2', 1],
  ['ots_3', 2],
  ['ots_4', 3],
];

describe('queue claim: several sessions in one statement', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { max: 4 });
    await migrate(db);
    await db.raw(`INSERT INTO tenants (id, name) VALUES ('ten_many', 'many')`);
    for (const project of ['prj_one_by_one', 'prj_together']) {
      await db.raw(`INSERT INTO projects (id, tenant_id, name) VALUES (?, 'ten_many', ?)`, [project, project]);
      for (const [i, [owner, group, rank, pinned]] of QUEUE.entries()) {
        await db.raw(
          `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, queue_owner, queue_group,
                                 queue_rank, requested_session_id, created_at)
           VALUES (?, 'ten_many', ?, 'queued', '[]', 0, ?, ?, ?, ?, ?::timestamptz - interval '1 minute')`,
          [`otr_${project}_${String(i).padStart(2, '0')}`, project, owner, group, rank, pinned, NOW],
        );
      }
    }
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const claim = async (project: string, asks: Array<[string, number]>) => {
    const { rows } = await db.raw(
      'SELECT session_id, run_id FROM otp_queue_claim_for(?, ?::text[], ?::int[], ?, ?::timestamptz, ?::jsonb)',
      [project, asks.map((a) => a[0]), asks.map((a) => a[1]), 'ins_1', NOW, POLICY],
    );
    return (rows as Array<{ session_id: string; run_id: string }>).map((r) => `${r.session_id} ${r.run_id.slice(-2)}`);
  };
  const accounts = async (project: string) => {
    const groups = await db('otp_queue_groups')
      .where({ project_id: project })
      .orderBy(['owner', 'grp'])
      .select('owner', 'grp', 'in_flight', 'start_sum', 'queued', 'base');
    const owners = await db('otp_queue_owners')
      .where({ project_id: project })
      .orderBy('owner')
      .select('owner', 'in_flight', 'gate_in_flight', 'start_sum', 'queued', 'base');
    return { groups, owners };
  };

  it('takes the same runs for the same sessions in the same order, and leaves the same accounts', async () => {
    const oneByOne: string[] = [];
    for (const ask of ASKS) oneByOne.push(...(await claim('prj_one_by_one', [ask])));
    const together = await claim('prj_together', ASKS);
    expect(together).to.deep.equal(oneByOne);
    // Every session got what it asked for while runs waited; the pinned run went to its own session.
    expect(together).to.have.length(9);
    expect(together.filter((t) => t.startsWith('ots_3'))).to.include('ots_3 06');
    expect(await accounts('prj_together')).to.deep.equal(await accounts('prj_one_by_one'));
    // Gate runs first (key_a's second one ranked normal: gate cap 1); the batch runs last; one left.
    expect(together.slice(0, 2)).to.deep.equal(['ots_1 03', 'ots_1 08']);
    expect(together.at(-1)).to.equal('ots_4 00');
    const left = await db('otp_runs').where({ status: 'queued' }).orderBy('id').pluck('id');
    expect(left).to.deep.equal(['otr_prj_one_by_one_01', 'otr_prj_together_01']);
  });

  it("finds a run back in the queue below its group's head, and passes over a run another transaction holds", async () => {
    const project = 'prj_heads';
    await db.raw(`INSERT INTO projects (id, tenant_id, name) VALUES (?, 'ten_many', 'heads')`, [project]);
    const run = (n: number) => `otr_heads_${n}`;
    for (const [n, group] of [
      [0, 'a'],
      [1, 'a'],
      [2, 'a'],
      [3, 'b'],
    ] as const)
      await db.raw(
        `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, queue_owner, queue_group)
         VALUES (?, 'ten_many', ?, 'queued', '[]', 0, 'key_h', ?)`,
        [run(n), project, group],
      );
    const one = async (session: string) => (await claim(project, [[session, 1]])).map((t) => t.slice(-1));
    const head = async () =>
      (await db('otp_queue_groups').where({ project_id: project, grp: 'a' }).first('head_after')).head_after[1];
    // Group a first (at one instant, the groups tie and go in key order): its head is its last run taken.
    expect([...(await one('ots_1')), ...(await one('ots_2'))]).to.deep.equal(['0', '1']);
    expect(await head()).to.equal(run(1));
    // Its oldest run goes back to the queue (its session left before it started): the head comes down.
    await db('otp_runs')
      .where({ id: run(0) })
      .update({ status: 'queued', session_id: null, started_at: null });
    expect(await head()).to.equal(run(0));
    // Another transaction holds it: the claim does not wait, and takes nothing more of its group (b's run instead).
    const holder = await db.transaction();
    try {
      await holder.raw('SELECT 1 FROM otp_runs WHERE id = ? FOR UPDATE', [run(0)]);
      expect(await one('ots_3')).to.deep.equal(['3']);
      expect(await one('ots_4')).to.deep.equal([]);
      expect(await head()).to.equal(run(0));
    } finally {
      await holder.rollback();
    }
    expect([...(await one('ots_4')), ...(await one('ots_5'))]).to.deep.equal(['0', '2']);
  });
});
