// The queue rule (src/otp/queue) in a deterministic simulation: seeded workloads on a virtual clock
// (test/queue/simulation.ts), checked against what docs/queues.md promises. The million dispatches
// are in test/slow/queue-million.spec.ts.
import { expect } from 'chai';
import { FairQueue } from '../../src/otp/queue/choice.js';
import { BATCH, DEFAULT_POLICY, GATE, NORMAL, type QueuedRun } from '../../src/otp/queue/model.js';
import { agedRank } from '../../src/otp/queue/rule.js';
import { expectSafe, jain, windowShares } from './properties.js';
import { mixed, shares } from './scenarios.js';
import { simulate } from './simulation.js';

const STARVATION_BOUND = DEFAULT_POLICY.batchToNormalMs + DEFAULT_POLICY.normalToGateMs;

function run(id: string, owner: string, group: string, rank: 0 | 1 | 2, postedAt: number, seq: number): QueuedRun {
  return { id, owner, group, rank, postedAt, seq };
}

describe('queue rule: simulation', () => {
  for (const seed of [1, 2, 3]) {
    it(`mixed workload, seed ${seed}: nothing lost or started twice, limits held, no idle slot, no group starved`, () => {
      const scenario = mixed(seed, 6, 3000);
      const outcome = simulate(scenario);
      expect(outcome.dispatches).to.be.greaterThan(10_000);
      expectSafe(outcome);
      for (const [group, wait] of outcome.headWaits)
        expect(wait, `${group} went without a start`).to.be.at.most(STARVATION_BOUND);
    });
  }

  it('the same seed gives the same starts, in the same order', () => {
    const order = (seed: number) => simulate({ ...mixed(seed, 1, 300), trace: true }).startOrder!.join();
    expect(order(7)).to.equal(order(7));
    expect(order(7)).not.to.equal(order(8));
  });

  it("owners always backlogged share executor time by weight (Jain's index >= 0.97 per 10-minute window)", () => {
    const scenario = shares(11, 3000);
    const windows = windowShares(simulate(scenario), scenario.policy?.ownerWeights ?? {});
    expect(windows.length).to.be.greaterThan(20);
    for (const window of windows) expect(jain([...window.values()])).to.be.at.least(0.97);
  });

  it('an owner split into twenty groups gets its fair share over the backlog, no more, no less (within 5%)', () => {
    const scenario = shares(12, 3000);
    let split = 0;
    let fair = 0;
    for (const window of windowShares(simulate(scenario), scenario.policy?.ownerWeights ?? {})) {
      if (!window.has('split')) continue;
      const others = [...window].filter(([owner]) => owner !== 'split').map(([, share]) => share);
      split += window.get('split')!;
      fair += others.reduce((a, b) => a + b, 0) / others.length;
    }
    expect(fair).to.be.greaterThan(0);
    expect(split / fair).to.be.within(0.95, 1.05);
  });

  it("an owner that was idle earns no credit: arriving late, it gets its share, not the others' past time", () => {
    const scenario = shares(13, 3000);
    const windows = windowShares(simulate(scenario), scenario.policy?.ownerWeights ?? {});
    const first = windows.find((w) => w.has('late'))!;
    const others = [...first].filter(([owner]) => owner !== 'late').map(([, share]) => share);
    expect(first.get('late')! / (others.reduce((a, b) => a + b, 0) / others.length)).to.be.within(0.9, 1.1);
  });
});

describe('queue rule: classes, aging, the gate cap, limits', () => {
  it('a waiting run rises a class after the documented times', () => {
    const p = DEFAULT_POLICY;
    expect(agedRank(BATCH, 0, p.batchToNormalMs - 1, p)).to.equal(BATCH);
    expect(agedRank(BATCH, 0, p.batchToNormalMs, p)).to.equal(NORMAL);
    expect(agedRank(BATCH, 0, p.batchToNormalMs + p.normalToGateMs, p)).to.equal(GATE);
    expect(agedRank(NORMAL, 0, p.normalToGateMs - 1, p)).to.equal(NORMAL);
    expect(agedRank(NORMAL, 0, p.normalToGateMs, p)).to.equal(GATE);
  });

  it('a gate run starts before older normal runs of a busier owner; beyond the gate cap it is ranked normal', () => {
    const queue = new FairQueue({ ...DEFAULT_POLICY, gateCap: 1 });
    queue.post(run('n1', 'a', 'a', NORMAL, 0, 1), 0);
    queue.post(run('g1', 'b', 'b', GATE, 1, 2), 1);
    queue.post(run('g2', 'b', 'b', GATE, 1, 3), 1);
    expect(queue.next(2)?.id).to.equal('g1');
    // b holds its one gate slot: g2 is ranked normal, and a (less virtual time) goes first.
    expect(queue.next(3)?.id).to.equal('n1');
    expect(queue.next(4)?.id).to.equal('g2');
  });

  it('a group at its maxInFlight starts nothing until one of its runs ends; others do meanwhile', () => {
    const queue = new FairQueue({ ...DEFAULT_POLICY, maxInFlight: { pr: 1 } });
    queue.post(run('p1', 'ci', 'pr', NORMAL, 0, 1), 0);
    queue.post(run('p2', 'ci', 'pr', NORMAL, 0, 2), 0);
    queue.post(run('m1', 'ci', 'main', NORMAL, 0, 3), 0);
    const started = [queue.next(1)!, queue.next(2)!];
    expect(started.map((r) => r.id).sort()).to.deep.equal(['m1', 'p1']);
    expect(queue.next(3)).to.equal(undefined);
    queue.end(started.find((r) => r.id === 'p1')!, 10);
    expect(queue.next(10)?.id).to.equal('p2');
  });

  it('a withdrawn run is never started', () => {
    const queue = new FairQueue();
    const first = run('w1', 'a', 'a', NORMAL, 0, 1);
    queue.post(first, 0);
    queue.post(run('w2', 'a', 'a', NORMAL, 0, 2), 0);
    expect(queue.withdraw(first)).to.equal(true);
    expect(queue.withdraw(first)).to.equal(false);
    expect(queue.next(1)?.id).to.equal('w2');
    expect(queue.next(1)).to.equal(undefined);
  });
});
