// The queue's data: priority classes, the policy (weights, limits, aging, the gate cap) and the small
// state kept per owner and per group, the same columns PostgreSQL keeps (db/migrations/070). Pure:
// no clock, no I/O; every time is a number of milliseconds given by the caller (docs/queues.md).

/** Priority classes, best first. A run's rank is its index: gate 0, normal 1, batch 2. */
export const QUEUE_CLASSES = ['gate', 'normal', 'batch'] as const;
export type QueueClass = (typeof QUEUE_CLASSES)[number];
export type ClassRank = 0 | 1 | 2;

export const GATE: ClassRank = 0;
export const NORMAL: ClassRank = 1;
export const BATCH: ClassRank = 2;

export function rankOf(klass: QueueClass): ClassRank {
  return QUEUE_CLASSES.indexOf(klass) as ClassRank;
}

/** Where a posted run stands in its project's queue: who posted it, its group and class, and the weights and limit its post was made with. */
export interface RunQueueing {
  owner: string;
  group: string;
  priority: QueueClass;
  ownerWeight: number | null;
  weight: number | null;
  maxInFlight: number | null;
}

/** How a project's queue is shared; every field has a documented default (docs/queues.md). */
export interface QueuePolicy {
  /** Weight per group key (default 1): a group's share of its owner's executor time. */
  groupWeights: Record<string, number>;
  /** Weight per owner key (default 1): an owner's share of the project's executor time. */
  ownerWeights: Record<string, number>;
  /** Runs in flight per group key at most (default: no limit). */
  maxInFlight: Record<string, number>;
  /** A batch run waiting this long is ranked normal. */
  batchToNormalMs: number;
  /** A normal run (or a batch run already risen) waiting this much longer is ranked gate. */
  normalToGateMs: number;
  /** An owner's gate runs beyond this many in flight are ranked normal (the gate cap). */
  gateCap: number;
}

export const DEFAULT_POLICY: QueuePolicy = Object.freeze({
  groupWeights: {},
  ownerWeights: {},
  maxInFlight: {},
  batchToNormalMs: 10 * 60_000,
  normalToGateMs: 30 * 60_000,
  gateCap: 2,
});

/**
 * Executor time held, as virtual time: `base` is the time charged for runs that ended, divided by
 * the weight; the runs in flight are charged as they hold, from `inFlight` and the sum of their
 * start times (`startSum`), so no per-run state is needed to know the virtual time at any moment.
 */
export interface Account {
  base: number;
  inFlight: number;
  startSum: number;
  weight: number;
}

/** An owner (the credential, level 1): its account, its gate runs in flight, its groups' floor. */
export interface OwnerState extends Account {
  key: string;
  gateInFlight: number;
  /** The system virtual time of its groups: a group that was idle starts no lower. */
  floor: number;
}

/** A group (level 2, inside an owner): its account, its limit and its queued runs per class. */
export interface GroupState extends Account {
  owner: string;
  key: string;
  maxInFlight: number;
  /** Queued runs per base class, oldest first. */
  queued: [RunFifo, RunFifo, RunFifo];
  /** Queued runs in all classes (kept with `queued`). */
  waiting: number;
}

/** A run waiting in the queue. `seq` orders runs posted (the run id's order in PostgreSQL). */
export interface QueuedRun {
  id: string;
  owner: string;
  group: string;
  rank: ClassRank;
  postedAt: number;
  seq: number;
}

/** A run the rule started: the time and whether it counts against its owner's gate cap. */
export interface StartedRun extends QueuedRun {
  startedAt: number;
  asGate: boolean;
}

/** Queued runs of one class of one group, oldest first: taking the oldest costs O(1) at any length. */
export class RunFifo {
  private items: QueuedRun[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  first(): QueuedRun | undefined {
    return this.items[this.head];
  }

  /** The run with `ahead` runs before it in this queue, if there is one. */
  at(ahead: number): QueuedRun | undefined {
    return this.items[this.head + ahead];
  }

  push(run: QueuedRun): void {
    this.items.push(run);
  }

  shift(): QueuedRun | undefined {
    const run = this.items[this.head];
    if (!run) return undefined;
    this.head += 1;
    // Drop the taken part once it is most of the array, so memory follows what is queued.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return run;
  }

  /** Takes the run out wherever it waits: true when it was there. */
  remove(id: string): boolean {
    for (let i = this.head; i < this.items.length; i++) {
      if (this.items[i]!.id !== id) continue;
      this.items.splice(i, 1);
      return true;
    }
    return false;
  }
}
