// The queue rule in PostgreSQL (migration 070: the triggers that keep the accounts, otp_queue_claim)
// and in memory (src/otp/queue, FairQueue) make the same choices: one seeded sequence of posts,
// claims, ends and withdrawals is applied to both, every claim must take the same run, and the
// accounts must agree at the end.
import { expect } from 'chai';
import { createDb, type Db, migrate } from '../../src/db/connect.js';
import { FairQueue } from '../../src/otp/queue/choice.js';
import { DEFAULT_POLICY, type QueuedRun, type QueuePolicy, type StartedRun } from '../../src/otp/queue/model.js';
import { virtualTime } from '../../src/otp/queue/rule.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { seeded } from './simulation.js';

const PROJECT = 'prj_queue';
const EPOCH = 1_790_000_000_000;
const at = (ms: number) => `timestamptz 'epoch' + ${EPOCH + ms}::bigint * interval '1 millisecond'`;

const POLICY: QueuePolicy = {
  ...DEFAULT_POLICY,
  groupWeights: { pr: 2 },
  ownerWeights: { key_b: 3 },
  maxInFlight: { nightly: 2 },
  batchToNormalMs: 60_000,
  normalToGateMs: 120_000,
  gateCap: 1,
};
const GROUPS: Array<[string, string]> = [
  ['key_a', 'nightly'],
  ['key_a', 'pr'],
  ['key_a', 'key_a'],
  ['key_b', 'main'],
  ['key_c', 'key_c'],
];

class SqlQueue {
  constructor(private readonly db: Db) {}

  async post(run: QueuedRun, now: number): Promise<void> {
    await this.db.raw(
      `INSERT INTO otp_runs (id, tenant_id, project_id, status, test_cases, total_steps, created_at, queue_owner, queue_group,
                             queue_rank, queue_owner_weight, queue_weight, queue_max_in_flight)
       VALUES (?, 'ten_queue', ?, 'queued', '[]', 0, ${at(now)}, ?, ?, ?, ?, ?, ?)`,
      [
        run.id,
        PROJECT,
        run.owner,
        run.group,
        run.rank,
        POLICY.ownerWeights[run.owner] ?? null,
        POLICY.groupWeights[run.group] ?? null,
        POLICY.maxInFlight[run.group] ?? null,
      ],
    );
  }

  async claim(now: number): Promise<string | undefined> {
    const policy = JSON.stringify({
      batchToNormalMs: POLICY.batchToNormalMs,
      normalToGateMs: POLICY.normalToGateMs,
      gateCap: POLICY.gateCap,
    });
    const { rows } = await this.db.raw(`SELECT run_id FROM otp_queue_claim(?, 'ots_1', 'inst_1', 1, ${at(now)}, ?)`, [
      PROJECT,
      policy,
    ]);
    return rows[0]?.run_id;
  }

  async end(id: string, now: number): Promise<void> {
    await this.db.raw(`UPDATE otp_runs SET status = 'passed', finished_at = ${at(now)} WHERE id = ?`, [id]);
  }

  async withdraw(id: string): Promise<void> {
    await this.db.raw(
      `UPDATE otp_runs SET status = 'cancelled', finished_at = now() WHERE id = ? AND status = 'queued'`,
      [id],
    );
  }
}

describe('queue rule: PostgreSQL and the TypeScript rule agree', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = createDb(database.url, { max: 2 });
    await migrate(db);
    await db.raw(`INSERT INTO tenants (id, name) VALUES ('ten_queue', 'queue')`);
    await db.raw(`INSERT INTO projects (id, tenant_id, name) VALUES (?, 'ten_queue', 'queue')`, [PROJECT]);
  });
  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('takes the same run at every claim of a seeded sequence (posts, claims, ends, withdrawals), and keeps the same accounts', async () => {
    const random = seeded(37);
    const memory = new FairQueue(POLICY);
    const sql = new SqlQueue(db);
    const running: StartedRun[] = [];
    const queued: QueuedRun[] = [];
    let now = 0;
    let claims = 0;
    for (let step = 0; step < 600; step++) {
      now += Math.floor(random() * 20_000);
      const roll = random();
      if (roll < 0.4) {
        const [owner, group] = GROUPS[Math.floor(random() * GROUPS.length)]!;
        const run: QueuedRun = {
          id: `otr_${String(step).padStart(6, '0')}`,
          owner,
          group,
          rank: Math.floor(random() * 3) as 0 | 1 | 2,
          postedAt: now,
          seq: step,
        };
        memory.post(run, now);
        await sql.post(run, now);
        queued.push(run);
      } else if (roll < 0.65 && running.length > 0) {
        const [run] = running.splice(Math.floor(random() * running.length), 1);
        memory.end(run!, now);
        await sql.end(run!.id, now);
      } else if (roll < 0.7 && queued.length > 0) {
        const [run] = queued.splice(Math.floor(random() * queued.length), 1);
        if (memory.withdraw(run!)) await sql.withdraw(run!.id);
      } else if (running.length < 4) {
        const expected = memory.next(now);
        expect(await sql.claim(now), `claim ${claims} at ${now}`).to.equal(expected?.id);
        if (expected) {
          claims += 1;
          running.push(expected);
          queued.splice(
            queued.findIndex((r) => r.id === expected.id),
            1,
          );
        }
      }
    }
    expect(claims).to.be.greaterThan(100);
    const { rows } = await db.raw('SELECT * FROM otp_queue_groups WHERE project_id = ?', [PROJECT]);
    for (const row of rows) {
      const group = memory.groups.get(`${row.owner}\u0000${row.grp}`)!;
      expect([row.in_flight, Number(row.start_sum), row.queued], `${row.owner}/${row.grp}`).to.deep.equal([
        group.inFlight,
        group.startSum + group.inFlight * EPOCH,
        group.waiting,
      ]);
      expect([row.queued_gate, row.queued_normal, row.queued_batch]).to.deep.equal(group.queued.map((q) => q.size));
      const vt = row.base + (row.in_flight * (EPOCH + now) - Number(row.start_sum)) / row.weight;
      expect(vt).to.be.closeTo(virtualTime(group, now), 1e-6);
    }
  });
});
