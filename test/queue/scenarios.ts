// The simulated workloads of test/queue and test/slow: a mixed one (every class, limits, a gate
// flood, superseded pushes, a group split in twenty) and a shares one (owners always backlogged).
import type { Scenario } from './simulation.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Every feature at once, overloaded for `hours` by a nightly burst of `nightly` runs. */
export function mixed(seed: number, hours: number, nightly: number, slots = 20): Scenario {
  const until = hours * HOUR;
  const scale = slots / 20;
  return {
    seed,
    slots,
    policy: { maxInFlight: { 'branch-x': 1, 'nightly-capped': 3 } },
    sources: [
      {
        owner: 'ci',
        group: () => 'nightly',
        rank: 2,
        every: 0,
        burst: nightly,
        until,
        duration: 60_000,
        spread: 30_000,
      },
      { owner: 'ci', group: () => 'pr', rank: 0, every: 5 * MIN, until, duration: 20_000, spread: 10_000 },
      {
        owner: 'ci',
        group: () => 'branch-x',
        rank: 1,
        every: MIN,
        until,
        duration: 40_000,
        spread: 20_000,
        supersede: 0.5,
      },
      { owner: 'main', group: () => 'main', rank: 1, every: 10_000 / scale, until, duration: 45_000, spread: 20_000 },
      { owner: 'alice', group: () => 'alice', rank: 1, every: 30 * MIN, until, duration: 30_000, spread: 5_000 },
      {
        owner: 'split',
        group: (n) => `sub-${n % 20}`,
        rank: 1,
        every: 5_000 / scale,
        until,
        duration: 40_000,
        spread: 20_000,
      },
      {
        owner: 'gater',
        group: () => 'all-gate',
        rank: 0,
        every: 10_000 / scale,
        until,
        duration: 30_000,
        spread: 10_000,
      },
      {
        owner: 'night2',
        group: () => 'nightly-capped',
        rank: 2,
        every: 20_000,
        until,
        duration: 90_000,
        spread: 30_000,
      },
    ],
  };
}

/** Owners that stay backlogged (a burst each at 0), of different run lengths and weights; one split in twenty groups, one arriving late. */
export function shares(seed: number, backlog: number, order: 'fair' | 'fifo' = 'fair'): Scenario {
  const until = 1;
  return {
    seed,
    slots: 30,
    order,
    policy: { ownerWeights: { heavy: 2 } },
    sources: [
      {
        owner: 'short',
        group: () => 'short',
        rank: 1,
        every: 0,
        burst: backlog,
        until,
        duration: 30_000,
        spread: 10_000,
      },
      {
        owner: 'long',
        group: () => 'long',
        rank: 1,
        every: 0,
        burst: backlog,
        until,
        duration: 120_000,
        spread: 60_000,
      },
      {
        owner: 'heavy',
        group: () => 'heavy',
        rank: 1,
        every: 0,
        burst: backlog,
        until,
        duration: 60_000,
        spread: 30_000,
      },
      {
        owner: 'split',
        group: (n) => `sub-${n % 20}`,
        rank: 1,
        every: 0,
        burst: backlog,
        until,
        duration: 45_000,
        spread: 20_000,
      },
      {
        owner: 'late',
        group: () => 'late',
        rank: 1,
        every: 0,
        burst: backlog,
        from: 2 * HOUR,
        until: 2 * HOUR + 1,
        duration: 60_000,
        spread: 30_000,
      },
    ],
  };
}

/**
 * The workload at its scale, on the simulated clock: 200 slots; one group posts 10,000 runs
 * at once (after 10 minutes, so that estimates have durations to go by); others add 30% load (a steady pipeline, and an owner split in twenty groups); one owner
 * posts a single run now and then; a gate run is posted under the flood every two minutes.
 */
export function flood(seed: number, order: 'fair' | 'fifo', hours = 2): Scenario {
  const until = hours * HOUR;
  return {
    seed,
    slots: 200,
    order,
    sources: [
      {
        owner: 'nightly',
        group: () => 'nightly',
        rank: 1,
        every: 0,
        burst: 10_000,
        from: 10 * MIN,
        until,
        duration: 60_000,
        spread: 30_000,
      },
      { owner: 'steady', group: () => 'main', rank: 1, every: 2_000, until, duration: 60_000, spread: 30_000 },
      { owner: 'split', group: (n) => `sub-${n % 20}`, rank: 1, every: 2_000, until, duration: 60_000, spread: 30_000 },
      {
        owner: 'single',
        group: () => 'single',
        rank: 1,
        every: 5 * MIN,
        from: MIN,
        until,
        duration: 60_000,
        spread: 30_000,
      },
      { owner: 'ci', group: () => 'gate', rank: 0, every: 2 * MIN, from: MIN, until, duration: 30_000, spread: 10_000 },
    ],
  };
}
