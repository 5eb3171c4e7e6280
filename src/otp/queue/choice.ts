// The choice of the next run for a free executor slot (docs/queues.md), over the state of one pool:
// the best class first (aged, gate capped per owner), then the owner with the least virtual time,
// then its group with the least, then that group's oldest run of that class. Pure and in memory: the
// reference the SQL functions of migration 070 follow, and what the simulation in test/queue/ drives.
import {
  type ClassRank,
  DEFAULT_POLICY,
  GATE,
  type GroupState,
  type OwnerState,
  type QueuedRun,
  type QueuePolicy,
  RunFifo,
  type StartedRun,
} from './model.js';
import { agedRank, cappedRank, chargeEnd, chargeStart, lift, limitOf, virtualTime, weightOf } from './rule.js';

/** A group's best run now: its rank under the rule and the run. */
interface Head {
  rank: ClassRank;
  run: QueuedRun;
}

/** The rank a queued run has at `now` for its owner. */
function rankNow(run: QueuedRun, owner: OwnerState, policy: QueuePolicy, now: number): ClassRank {
  return cappedRank(agedRank(run.rank, run.postedAt, now, policy), owner, policy);
}

/** The group's best run at `now` (the best rank, then the oldest), or undefined when it may start none. */
export function headOf(group: GroupState, owner: OwnerState, policy: QueuePolicy, now: number): Head | undefined {
  if (group.waiting === 0 || group.inFlight >= group.maxInFlight) return undefined;
  let best: Head | undefined;
  for (const fifo of group.queued) {
    const run = fifo.first();
    if (!run) continue;
    const rank = rankNow(run, owner, policy, now);
    if (!best || rank < best.rank || (rank === best.rank && run.seq < best.run.seq)) best = { rank, run };
  }
  return best;
}

function lessBy(a: { key: string }, va: number, b: { key: string } | undefined, vb: number): boolean {
  return !b || va < vb || (va === vb && a.key < b.key);
}

/** The queue of one pool (a project's executors): owners, their groups, their queued runs. */
export class FairQueue {
  readonly owners = new Map<string, OwnerState>();
  readonly groups = new Map<string, GroupState>();
  private readonly groupsOf = new Map<string, GroupState[]>();
  /** The owners' system virtual time: an owner that was idle starts no lower. */
  floor = 0;

  constructor(readonly policy: QueuePolicy = DEFAULT_POLICY) {}

  /** A run is posted at `now`: its owner and group become active (lifted to the floor) if they were idle. */
  post(run: QueuedRun, now: number): void {
    const owner = this.ownerFor(run.owner, now);
    const group = this.groupFor(owner, run.group, now);
    group.queued[run.rank].push(run);
    group.waiting += 1;
  }

  /** Takes a queued run out (cancelled, or superseded): true when it was queued. */
  withdraw(run: QueuedRun): boolean {
    const group = this.groups.get(groupId(run.owner, run.group));
    if (!group?.queued[run.rank].remove(run.id)) return false;
    group.waiting -= 1;
    return true;
  }

  /** The run the rule starts next at `now`, started (charged from now), or undefined when none may start. */
  next(now: number): StartedRun | undefined {
    const chosen = this.choose(now);
    if (!chosen) return undefined;
    const { group, head } = chosen;
    const owner = this.owners.get(group.owner)!;
    group.queued[head.run.rank].shift();
    group.waiting -= 1;
    chargeStart(owner, now);
    chargeStart(group, now);
    const asGate = head.rank === GATE;
    if (asGate) owner.gateInFlight += 1;
    return { ...head.run, startedAt: now, asGate };
  }

  /** A started run lets its executor go at `now`. */
  end(run: StartedRun, now: number): void {
    const owner = this.owners.get(run.owner)!;
    const group = this.groups.get(groupId(run.owner, run.group))!;
    chargeEnd(owner, run.startedAt, now);
    chargeEnd(group, run.startedAt, now);
    if (run.asGate) owner.gateInFlight -= 1;
  }

  /** Queued runs in all groups. */
  get waiting(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.waiting;
    return n;
  }

  /** Whether some run may start now (the rule is work-conserving: `next` then starts one). */
  eligible(now: number): boolean {
    for (const group of this.groups.values()) {
      if (headOf(group, this.owners.get(group.owner)!, this.policy, now)) return true;
    }
    return false;
  }

  /** The best class among the groups' heads, then the owner and the group with the least virtual time. */
  private choose(now: number): { group: GroupState; head: Head } | undefined {
    const heads = new Map<GroupState, Head>();
    let best: ClassRank | undefined;
    for (const group of this.groups.values()) {
      const head = headOf(group, this.owners.get(group.owner)!, this.policy, now);
      if (!head) continue;
      heads.set(group, head);
      if (best === undefined || head.rank < best) best = head.rank;
    }
    if (best === undefined) return undefined;
    const owner = this.leastOwner(heads, best, now);
    let group: GroupState | undefined;
    let least = 0;
    for (const candidate of this.groupsOf.get(owner.key) ?? []) {
      if (heads.get(candidate)?.rank !== best) continue;
      const v = virtualTime(candidate, now);
      if (lessBy(candidate, v, group, least)) [group, least] = [candidate, v];
    }
    return group && { group, head: heads.get(group)! };
  }

  private leastOwner(heads: Map<GroupState, Head>, rank: ClassRank, now: number): OwnerState {
    let owner: OwnerState | undefined;
    let least = 0;
    for (const [group, head] of heads) {
      if (head.rank !== rank) continue;
      const candidate = this.owners.get(group.owner)!;
      const v = virtualTime(candidate, now);
      if (lessBy(candidate, v, owner, least)) [owner, least] = [candidate, v];
    }
    return owner!;
  }

  private ownerFor(key: string, now: number): OwnerState {
    let owner = this.owners.get(key);
    if (!owner) {
      owner = { key, base: 0, inFlight: 0, startSum: 0, weight: 1, gateInFlight: 0, floor: 0 };
      this.owners.set(key, owner);
      this.groupsOf.set(key, []);
    }
    if (!this.activeOwner(owner)) {
      this.floor = Math.max(
        this.floor,
        this.leastActive([...this.owners.values()], (o) => this.activeOwner(o), now),
      );
      owner.weight = weightOf(this.policy.ownerWeights, key);
      lift(owner, this.floor);
    }
    return owner;
  }

  private groupFor(owner: OwnerState, key: string, now: number): GroupState {
    const id = groupId(owner.key, key);
    let group = this.groups.get(id);
    if (!group) {
      const fresh = { base: 0, inFlight: 0, startSum: 0, weight: 1, maxInFlight: 1, waiting: 0 };
      group = { owner: owner.key, key, ...fresh, queued: [new RunFifo(), new RunFifo(), new RunFifo()] };
      this.groups.set(id, group);
      this.groupsOf.get(owner.key)!.push(group);
    }
    if (group.waiting === 0 && group.inFlight === 0) {
      const siblings = this.groupsOf.get(owner.key)!;
      owner.floor = Math.max(
        owner.floor,
        this.leastActive(siblings, (g) => g.waiting > 0 || g.inFlight > 0, now),
      );
      group.weight = weightOf(this.policy.groupWeights, key);
      group.maxInFlight = limitOf(this.policy, key);
      lift(group, owner.floor);
    }
    return group;
  }

  private activeOwner(owner: OwnerState): boolean {
    return owner.inFlight > 0 || (this.groupsOf.get(owner.key) ?? []).some((g) => g.waiting > 0);
  }

  /** The least virtual time at `now` among the active accounts (the system virtual time), or -Infinity when none is. */
  private leastActive<T extends GroupState | OwnerState>(
    accounts: T[],
    active: (a: T) => boolean,
    now: number,
  ): number {
    let least = Number.POSITIVE_INFINITY;
    for (const account of accounts) if (active(account)) least = Math.min(least, virtualTime(account, now));
    return least === Number.POSITIVE_INFINITY ? Number.NEGATIVE_INFINITY : least;
  }
}

/** The key of a group inside its owner. */
export function groupId(owner: string, group: string): string {
  return `${owner}\u0000${group}`;
}
