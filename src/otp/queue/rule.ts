// The arithmetic of the rule (docs/queues.md): virtual time charged by executor-hold time, the lift
// that gives an idle group no credit, aging and the gate cap. Pure; the SQL functions of migration
// 070 compute the same, and test/queue/sql-agreement.spec.ts holds them to it.
import { type Account, BATCH, type ClassRank, GATE, NORMAL, type OwnerState, type QueuePolicy } from './model.js';

/** The account's virtual time at `now`: ended runs' time plus the time its runs in flight held so far, over its weight. */
export function virtualTime(account: Account, now: number): number {
  return account.base + (account.inFlight * now - account.startSum) / account.weight;
}

/** A run starts holding an executor at `now`. */
export function chargeStart(account: Account, now: number): void {
  account.inFlight += 1;
  account.startSum += now;
}

/** A run that started at `startedAt` lets its executor go at `now`: the time it held is charged. */
export function chargeEnd(account: Account, startedAt: number, now: number): void {
  account.inFlight -= 1;
  account.startSum -= startedAt;
  account.base += (now - startedAt) / account.weight;
}

/**
 * An account that becomes active (work posted while it had none queued or in flight) starts at the
 * system virtual time `floor` if it is behind it: time it did not ask for is not owed to it later.
 */
export function lift(account: Account, floor: number): void {
  if (account.base < floor) account.base = floor;
}

/** The rank a run waiting since `postedAt` has at `now`: batch rises to normal, normal to gate, by the policy's times. */
export function agedRank(rank: ClassRank, postedAt: number, now: number, policy: QueuePolicy): ClassRank {
  const waited = now - postedAt;
  if (rank === BATCH) {
    if (waited < policy.batchToNormalMs) return BATCH;
    return waited < policy.batchToNormalMs + policy.normalToGateMs ? NORMAL : GATE;
  }
  if (rank === NORMAL) return waited < policy.normalToGateMs ? NORMAL : GATE;
  return GATE;
}

/** The rank the rule uses: gate is ranked normal once the owner holds its gate cap in flight. */
export function cappedRank(rank: ClassRank, owner: OwnerState, policy: QueuePolicy): ClassRank {
  return rank === GATE && owner.gateInFlight >= policy.gateCap ? NORMAL : rank;
}

/** The weight of a key under a policy's table (default 1; a weight must be positive). */
export function weightOf(table: Record<string, number>, key: string): number {
  const weight = table[key];
  return weight !== undefined && weight > 0 ? weight : 1;
}

/** A group's limit of runs in flight (no limit by default). */
export function limitOf(policy: QueuePolicy, key: string): number {
  const limit = policy.maxInFlight[key];
  return limit !== undefined && limit > 0 ? limit : Number.POSITIVE_INFINITY;
}
