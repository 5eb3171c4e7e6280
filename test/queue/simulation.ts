// A deterministic simulation of the queue rule (src/otp/queue): a seeded random source, a virtual
// clock, executor slots that free when a run's (drawn) duration has passed. It drives FairQueue and
// records what the properties of docs/queues.md are checked against: every run's post, start and
// end, the slots in use, and whether a slot stayed free while a run could start.
import { FairQueue, groupId } from '../../src/otp/queue/choice.js';
import {
  type ClassRank,
  DEFAULT_POLICY,
  type QueuedRun,
  type QueuePolicy,
  type StartedRun,
} from '../../src/otp/queue/model.js';
import { FifoQueue } from './fifo.js';

/** mulberry32: a small seeded source, the same numbers on every machine. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A source of runs: who posts, how often, which class, how long each holds an executor. */
export interface Source {
  owner: string;
  /** The group of each run (a function so that one source may spread over sub-groups). */
  group: (n: number) => string;
  rank: ClassRank;
  /** Mean time between posts (ms); 0 posts `burst` runs at `from` only. */
  every: number;
  burst?: number;
  from?: number;
  until: number;
  /** Mean and spread of a run's duration (ms): uniform in mean ± spread. */
  duration: number;
  spread: number;
  /** Chance that a post supersedes its group's queued runs (cancelInProgress). */
  supersede?: number;
}

export interface Scenario {
  seed: number;
  slots: number;
  sources: Source[];
  policy?: Partial<QueuePolicy>;
  /** The window of the executor-time accounts (ms; 10 minutes by default). */
  window?: number;
  trace?: boolean;
  /** The order: the queue rule (default) or first come, first served (the benchmark's baseline). */
  order?: 'fair' | 'fifo';
  /** Told of each post (before the run is queued), start and end, for figures of one's own. */
  observe?: Observer;
}

export interface Observer {
  posted?(run: QueuedRun, queue: FairQueue | undefined, now: number): void;
  started?(run: StartedRun, now: number): void;
  ended?(run: StartedRun, now: number): void;
}

/** What the simulation needs of a queue: FairQueue, or FifoQueue for the baseline. */
type SimQueue = Pick<FairQueue, 'post' | 'next' | 'end' | 'withdraw' | 'eligible' | 'waiting'>;

export interface RunRecord {
  run: QueuedRun;
  duration: number;
  startedAt?: number;
  withdrawn?: boolean;
  starts: number;
}

/**
 * What the properties are checked against, gathered as the simulation goes (a million runs are not
 * kept): wrong starts and ends, the longest head wait per group, executor time per owner per window.
 */
export interface Outcome {
  queue: SimQueue;
  posted: number;
  withdrawn: number;
  dispatches: number;
  /** Runs started more than once, or ended without a start or twice (must be 0). */
  wrongStarts: number;
  /** Runs neither ended nor withdrawn when the simulation stopped (must be 0). */
  unfinished: number;
  /** Times a slot stayed free while the rule could start a run (must be 0). */
  idleWhileEligible: number;
  /** Starts beyond a limit: the pool's slots, a group's maxInFlight, an owner's gate cap (must be 0). */
  overLimit: number;
  /** The longest a group went without a start while it had a run queued, groups with a limit left out. */
  headWaits: Map<string, number>;
  /** Longest wait from post to start, per owner and base class (`owner/rank`). */
  longestWaits: Map<string, number>;
  /** Executor time per owner in each window of `window` ms (index: window number). */
  held: Array<Map<string, number>>;
  /** When each owner had work queued: its first post and its last start. */
  backlog: Map<string, [number, number]>;
  /** Per owner, the windows in which it had nothing queued at some moment (not backlogged throughout). */
  idleWindows: Map<string, Set<number>>;
  window: number;
  endedAt: number;
  /** Run ids in the order they started, when asked for (`trace`). */
  startOrder?: string[];
}

type NewEvent = { at: number; kind: 'post'; source: number } | { at: number; kind: 'end'; run: StartedRun };
type Event = NewEvent & { seq: number };

/** A binary heap of events by time, then by the order they were made (deterministic). */
class Events {
  private readonly heap: Event[] = [];
  private seq = 0;
  push(event: NewEvent): void {
    const heap = this.heap;
    heap.push({ ...event, seq: this.seq++ });
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }
  pop(): Event | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || !last) return top;
    heap[0] = last;
    for (let i = 0; ; ) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
    return top;
  }
  peek(): Event | undefined {
    return this.heap[0];
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Runs the scenario until every run posted has ended or was withdrawn. */
export function simulate(scenario: Scenario): Outcome {
  const policy = { ...DEFAULT_POLICY, ...scenario.policy };
  const queue = scenario.order === 'fifo' ? new FifoQueue() : new FairQueue(policy);
  return new Simulation(queue, policy, scenario, seeded(scenario.seed)).run();
}

class Simulation {
  private readonly events = new Events();
  private readonly live = new Map<string, RunRecord>();
  private readonly lastStart = new Map<string, number>();
  /** Per owner: runs queued now, and since when it has had none (when it has none). */
  private readonly queuedOf = new Map<string, { count: number; emptySince?: number }>();
  private readonly outcome: Outcome;
  private inUse = 0;
  private now = 0;

  constructor(
    private readonly queue: SimQueue,
    private readonly policy: QueuePolicy,
    private readonly scenario: Scenario,
    private readonly random: () => number,
  ) {
    this.outcome = {
      queue,
      posted: 0,
      withdrawn: 0,
      dispatches: 0,
      wrongStarts: 0,
      unfinished: 0,
      idleWhileEligible: 0,
      overLimit: 0,
      headWaits: new Map(),
      longestWaits: new Map(),
      held: [],
      backlog: new Map(),
      idleWindows: new Map(),
      window: scenario.window ?? 600_000,
      endedAt: 0,
      ...(scenario.trace ? { startOrder: [] } : {}),
    };
    scenario.sources.forEach((source, i) => {
      this.events.push({ at: source.from ?? 0, kind: 'post', source: i });
    });
  }

  run(): Outcome {
    for (let event = this.events.pop(); event; event = this.events.pop()) {
      this.now = event.at;
      if (event.kind === 'post') this.post(event.source);
      else this.end(event.run);
      // Every event at one time is applied before the free slots are filled.
      if (this.events.peek()?.at !== this.now) this.fill();
    }
    for (const record of this.live.values()) if (!record.withdrawn) this.outcome.unfinished += 1;
    // Owners with nothing queued at the end: idle from then on (a post of nothing marks the windows).
    for (const owner of this.queuedOf.keys()) this.queuedBy(owner, +1);
    this.outcome.endedAt = this.now;
    return this.outcome;
  }

  private post(index: number): void {
    const source = this.scenario.sources[index]!;
    const count = source.every === 0 ? (source.burst ?? 1) : 1;
    for (let i = 0; i < count; i++) this.postOne(source);
    if (source.every === 0) return;
    const next = this.now + Math.max(1, Math.round(-Math.log(1 - this.random()) * source.every));
    if (next < source.until) this.events.push({ at: next, kind: 'post', source: index });
  }

  private postOne(source: Source): void {
    const n = this.outcome.posted++;
    const group = source.group(n);
    const run: QueuedRun = { id: `r${n}`, owner: source.owner, group, rank: source.rank, postedAt: this.now, seq: n };
    if (source.supersede && this.random() < source.supersede) this.supersede(run);
    const duration = Math.max(1, Math.round(source.duration + (2 * this.random() - 1) * source.spread));
    this.live.set(run.id, { run, duration, starts: 0 });
    this.scenario.observe?.posted?.(run, this.queue instanceof FairQueue ? this.queue : undefined, this.now);
    this.queue.post(run, this.now);
    const span = this.outcome.backlog.get(run.owner);
    if (!span) this.outcome.backlog.set(run.owner, [this.now, this.now]);
    this.queuedBy(run.owner, +1);
  }

  /** Keeps each owner's queued count; the windows it spent with none queued are marked idle. */
  private queuedBy(owner: string, change: number): void {
    const state = this.queuedOf.get(owner) ?? { count: 0, emptySince: this.now };
    this.queuedOf.set(owner, state);
    if (state.count === 0 && change > 0 && state.emptySince !== undefined) {
      const idle = this.outcome.idleWindows.get(owner) ?? new Set<number>();
      this.outcome.idleWindows.set(owner, idle);
      const window = this.outcome.window;
      for (let w = Math.floor(state.emptySince / window); w <= Math.floor(this.now / window); w++) idle.add(w);
      state.emptySince = undefined;
    }
    state.count += change;
    if (state.count === 0) state.emptySince = this.now;
  }

  /** cancelInProgress: the group's queued runs are withdrawn. */
  private supersede(by: QueuedRun): void {
    for (const record of this.live.values()) {
      if (record.run.owner !== by.owner || record.run.group !== by.group || record.withdrawn) continue;
      if (record.startedAt === undefined && this.queue.withdraw(record.run)) {
        record.withdrawn = true;
        this.queuedBy(record.run.owner, -1);
        this.live.delete(record.run.id);
        this.outcome.withdrawn += 1;
      }
    }
  }

  private end(run: StartedRun): void {
    this.queue.end(run, this.now);
    this.scenario.observe?.ended?.(run, this.now);
    const record = this.live.get(run.id);
    if (!record || record.startedAt === undefined) this.outcome.wrongStarts += 1;
    else this.account(run.owner, record.startedAt, this.now);
    this.live.delete(run.id);
    this.inUse -= 1;
  }

  /** Executor time held from `from` to `to`, into the windows it spans. */
  private account(owner: string, from: number, to: number): void {
    const { held, window } = this.outcome;
    for (let w = Math.floor(from / window); w * window < to; w++) {
      const overlap = Math.min(to, (w + 1) * window) - Math.max(from, w * window);
      const slot = held[w] ?? (held[w] = new Map());
      slot.set(owner, (slot.get(owner) ?? 0) + overlap);
    }
  }

  private fill(): void {
    while (this.inUse < this.scenario.slots) {
      const run = this.queue.next(this.now);
      if (!run) break;
      this.start(run);
    }
    if (this.inUse < this.scenario.slots && this.queue.eligible(this.now)) this.outcome.idleWhileEligible += 1;
  }

  private start(run: StartedRun): void {
    const record = this.live.get(run.id);
    if (!record || record.starts > 0) {
      this.outcome.wrongStarts += 1;
      return;
    }
    record.startedAt = this.now;
    record.starts += 1;
    this.queuedBy(run.owner, -1);
    this.inUse += 1;
    this.outcome.dispatches += 1;
    this.outcome.startOrder?.push(run.id);
    this.scenario.observe?.started?.(run, this.now);
    this.checkLimits(run);
    this.waited(run);
    this.events.push({ at: this.now + record.duration, kind: 'end', run });
  }

  private checkLimits(run: StartedRun): void {
    if (this.inUse > this.scenario.slots) this.outcome.overLimit += 1;
    if (!(this.queue instanceof FairQueue)) return;
    const group = this.queue.groups.get(groupId(run.owner, run.group))!;
    const owner = this.queue.owners.get(run.owner)!;
    const overCap = owner.gateInFlight > this.policy.gateCap;
    if (group.inFlight > group.maxInFlight || overCap) this.outcome.overLimit += 1;
  }

  private waited(run: StartedRun): void {
    const { headWaits, longestWaits, backlog } = this.outcome;
    const key = `${run.owner}/${run.group}`;
    const wait = this.now - run.postedAt;
    const byClass = `${run.owner}/${run.rank}`;
    longestWaits.set(byClass, Math.max(longestWaits.get(byClass) ?? 0, wait));
    backlog.get(run.owner)![1] = this.now;
    if (this.policy.maxInFlight[run.group]) return;
    const head = this.now - Math.max(run.postedAt, this.lastStart.get(key) ?? Number.NEGATIVE_INFINITY);
    this.lastStart.set(key, this.now);
    headWaits.set(key, Math.max(headWaits.get(key) ?? 0, head));
  }
}

/** Jain's fairness index of the values (1 when all are equal). */
export function jain(values: number[]): number {
  const sum = values.reduce((a, b) => a + b, 0);
  const squares = values.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (values.length * squares);
}
