// queues-live (issue 37): the queue rule on the real service. Three service processes on one database,
// executors (maxParallel 1) spread over them. In one project the group "flood" has N runs queued before
// the executors connect (as if posted at once: copies of a POSTed run, see copyRun); then, for a window,
// two burst groups add about 30% more load, the group "single" posts one run now and then and "gate" a
// gate run. A second project (the other tenant) keeps a few executors stepping and GETs its runs list,
// alone first, then during the flood. The same with OTP_QUEUE=fifo on a fresh database is the baseline.
// Waits and executor time come from the runs' rows afterwards (created_at, started_at, finished_at).
import { Fleet, shares } from '../lib/fleet.js';
import { testCaseBody } from '../lib/frames.js';
import { sleep } from '../lib/procs.js';
import type { Collected } from '../lib/protocol.js';
import { fmt, pct, type Row } from '../lib/report.js';
import { createTestCase, type ServiceUnderTest } from '../lib/service.js';
import { merge, summarize } from '../lib/stats.js';
import type { Scenario, ScenarioContext } from './context.js';
import { connectWithProgress } from './sessions.js';

/** Mean time an executor takes per step (0.5× to 1.5× of it: 17-53 ms). */
const STEP_DELAY_MS = 35;
/** Together 30% of the throughput seen, posted in bursts of a few seconds' worth (so that they too have work waiting). */
const BURST_GROUPS = ['burst-a', 'burst-b'];
const BURST_SHARE = 0.3;
const POSTS_IN_FLIGHT = 24;
/** How often the slots each group holds are set against its fair share. */
const SAMPLE_MS = 10;

type Order = 'fair' | 'fifo';

interface LiveRun {
  group: string;
  created: number;
  started: number;
  finished: number;
}

interface Phase {
  runs: LiveRun[];
  statuses: Record<string, number>;
  /** The window: from the pool's executors connected to the last post. */
  from: number;
  to: number;
  postFailures: number;
  /** The other tenant's executors and REST probe: alone, and during the flood. */
  quiet: Collected;
  flood: Collected;
}

async function call<T>(url: string, key: string, method: string, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

let firstFailure: string | undefined;

/** Posts `count` runs, POSTS_IN_FLIGHT at a time, round-robin over the processes; answers the failures. */
async function post(services: ServiceUnderTest[], count: number, body: () => object): Promise<number> {
  let next = 0;
  let failures = 0;
  const lane = async () => {
    while (next < count) {
      const s = services[next++ % services.length]!;
      await call(`${s.api}/otp/runs`, s.key, 'POST', body()).catch((err) => {
        failures++;
        firstFailure ??= String(err).slice(0, 200);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(POSTS_IN_FLIGHT, count) }, lane));
  return failures;
}

/** Three processes on one fresh database, started one after the other (at once, on a busy machine, they passed the 60 s start limit). */
async function withTrio(ctx: ScenarioContext, order: Order): Promise<Phase> {
  // The executors are gone when the processes stop: nothing to drain.
  const env = { OTP_QUEUE: order, OTP_DRAIN_MS: '500' };
  const services = [await ctx.startService({ env })];
  try {
    for (let i = 0; i < 2; i++) services.push(await ctx.startService({ env, sharedDatabaseUrl: services[0]!.dbUrl }));
    ctx.progress(`queues-live/${order}: three processes up`);
    return await runPhase(ctx, services, order);
  } finally {
    await stopAll(services);
  }
}

/** The first process made the database: it stops last. */
async function stopAll(services: ServiceUnderTest[]): Promise<void> {
  await Promise.all(services.slice(1).map((s) => s.stop()));
  await services[0]?.stop();
}

type Connected = { ok: number; failed: number; firstError?: string };

/** `count` executors of maxParallel 1 for `key`, spread over the processes and the fleet's workers. */
async function connectSpread(
  ctx: ScenarioContext,
  services: ServiceUnderTest[],
  fleet: Fleet,
  count: number,
  key: string,
): Promise<number> {
  const perService = shares(count, services.length);
  const all = async () => {
    const results: Connected[] = [];
    for (const [i, s] of services.entries()) {
      const parts = shares(perService[i]!, fleet.size);
      const connect = (w: number) =>
        ({ op: 'otp-connect', url: s.otpUrl, key, count: parts[w]!, concurrency: 20, maxParallel: 1 }) as const;
      results.push(...(await fleet.all<Connected>(connect)));
    }
    return results;
  };
  return connectWithProgress(ctx, fleet, 'queues-live', all());
}

/**
 * The other tenant runs alone for --duration s; the flood is posted (no pool executor connected yet,
 * so all of it queues, as if posted at once); the pool's executors connect, and the window runs.
 */
async function runPhase(ctx: ScenarioContext, services: ServiceUnderTest[], order: Order): Promise<Phase> {
  const { duration, queuesLive } = ctx.options;
  const label = `queues-live/${order}`;
  const a = services[0]!;
  const pool = await Fleet.start(ctx.options.workers);
  const tenant = await Fleet.start(1);
  try {
    const cases = [await createTestCase(a, testCaseBody('one', 1)), await createTestCase(a, testCaseBody('two', 2))];
    const project = await a.request<{ id: string; adminKey: { key: string } }>('POST', '/platform/projects', {
      name: 'other tenant',
    });
    const tenantKey = project.adminKey.key;
    const tenantCase = await call<{ id: string }>(`${a.api}/tests/cases`, tenantKey, 'POST', testCaseBody('t', 10));
    const drive = { op: 'otp-drive', runsAhead: 1, stepDelayMs: STEP_DELAY_MS } as const;
    // The pool's executors post nothing (sessions: 0): they perform what the service gives them.
    await pool.all({ ...drive, api: a.api, key: a.key, testCaseIds: cases, sessions: 0 });
    await tenant.all({ ...drive, api: a.api, key: tenantKey, testCaseIds: [tenantCase.id] });
    await connectSpread(ctx, services, tenant, queuesLive.tenantExecutors, tenantKey);
    const urls = services.map((s) => `${s.api}/otp/runs?limit=20`);
    await tenant.all({ op: 'rest-probe', urls, key: tenantKey, pauseMs: 50 });
    await sleep(1000);
    await tenant.all({ op: 'reset', latency: true });
    ctx.progress(`${label}: the other tenant alone for ${duration} s`);
    await sleep(duration * 1000);
    const quiet = merge(await tenant.collect());
    await tenant.all({ op: 'reset', latency: true });
    ctx.progress(`${label}: the flood: ${fmt(queuesLive.runs)} runs queued`);
    const run =
      (group: string, priority = 'normal') =>
      () => ({
        testCaseIds: [cases[Math.floor(Math.random() * cases.length)]],
        group,
        priority,
      });
    let postFailures = 0;
    for (const [i, testCaseId] of cases.entries()) {
      const template = await call<{ runId: string }>(`${a.api}/otp/runs`, a.key, 'POST', {
        testCaseIds: [testCaseId],
        group: 'flood',
      });
      await copyRun(a, template.runId, shares(queuesLive.runs, cases.length)[i]! - 1);
    }
    const ok = await connectSpread(ctx, services, pool, queuesLive.slots, a.key);
    const from = Date.now();
    ctx.progress(`${label}: ${ok} executors; the window opens for ${fmt(windowMs(ctx) / 1000)} s`);
    postFailures += await workload(ctx, label, services, pool, run);
    const to = Date.now();
    const flood = merge(await tenant.collect());
    const { rows } = await a.db.query('SELECT DISTINCT project_id FROM api_keys WHERE project_id <> $1', [project.id]);
    return { ...(await readRuns(a, rows[0].project_id)), from, to, postFailures, quiet, flood };
  } finally {
    await pool.stop();
    await tenant.stop();
  }
}

/**
 * `count` copies of a queued run in one statement (its row and its steps, ids after its own): POSTing
 * 10,000 runs took over 3 minutes here, and the flood is meant to be queued at once. The statement
 * triggers on otp_runs keep the queue's accounts as for any insert.
 */
async function copyRun(service: ServiceUnderTest, runId: string, count: number): Promise<void> {
  const copy = async (table: string, key: string) => {
    const { rows } = await service.db.query(
      `SELECT column_name AS name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
          AND coalesce(column_default, '') NOT LIKE 'nextval%' ORDER BY ordinal_position`,
      [table],
    );
    const names: string[] = rows.map((r: { name: string }) => r.name);
    const value = (name: string) =>
      name === key
        ? `substr(t.${key}, 1, 14) || lpad(g::text, 16, '0')`
        : name === 'created_at'
          ? 'now()'
          : `t.${name}`;
    await service.db.query(
      `INSERT INTO ${table} (${names.join(', ')}) SELECT ${names.map(value).join(', ')}
         FROM ${table} t, generate_series(1, $2::int) g WHERE t.${key} = $1 ORDER BY g`,
      [runId, count],
    );
  };
  await service.db.query('BEGIN');
  await copy('otp_runs', 'id');
  await copy('otp_run_steps', 'run_id');
  await service.db.query('COMMIT');
}

const windowMs = (ctx: ScenarioContext) => ctx.options.duration * 4000;

/**
 * The window: every tick a gate run or a single run in turn, and every burst period a burst of each
 * burst group, 30% of the runs that ended since the last. Answers the failed POSTs.
 */
async function workload(
  ctx: ScenarioContext,
  label: string,
  services: ServiceUnderTest[],
  pool: Fleet,
  run: (group: string, priority?: string) => () => object,
): Promise<number> {
  const tickMs = ctx.options.smoke ? 250 : 500;
  const burstEvery = ctx.options.smoke ? 2000 : 8000;
  const posts: Promise<number>[] = [];
  const began = Date.now();
  let burstAt = began;
  let finishedAtBurst = pool.totals().runsFinished;
  for (let tick = 1; Date.now() - began < windowMs(ctx); tick++) {
    await sleep(tickMs);
    posts.push(post(services, 1, tick % 2 ? run('gate', 'gate') : run('single')));
    if (Date.now() - burstAt >= burstEvery) {
      const finished = pool.totals().runsFinished;
      const each = Math.max(1, Math.round((BURST_SHARE * (finished - finishedAtBurst)) / BURST_GROUPS.length));
      for (const group of BURST_GROUPS) posts.push(post(services, each, run(group)));
      [burstAt, finishedAtBurst] = [Date.now(), finished];
    }
    if (tick % 10 === 0)
      ctx.progress(`${label}: ${fmt(pool.totals().runsFinished)} runs ended in ${fmt((Date.now() - began) / 1000)} s`);
  }
  return (await Promise.all(posts)).reduce((a, b) => a + b, 0);
}

/** The project's runs; a run not started (ended) has started (finished) at Infinity. */
async function readRuns(service: ServiceUnderTest, projectId: string) {
  const { rows } = await service.db.query(
    `SELECT queue_group AS "group", status, extract(epoch FROM created_at) * 1000 AS created,
            extract(epoch FROM started_at) * 1000 AS started, extract(epoch FROM finished_at) * 1000 AS finished
       FROM otp_runs WHERE project_id = $1`,
    [projectId],
  );
  const statuses: Record<string, number> = {};
  const runs: LiveRun[] = [];
  const time = (v: string | null) => (v === null ? Number.POSITIVE_INFINITY : Number(v));
  for (const r of rows) {
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    runs.push({ group: r.group, created: Number(r.created), started: time(r.started), finished: time(r.finished) });
  }
  return { runs, statuses };
}

function quantile(samples: number[] | undefined, p: number): number {
  if (!samples?.length) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** Sorted values and how many are ≤ t. */
function atMost(sorted: Float64Array, t: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const jain = (xs: number[]) => xs.reduce((a, b) => a + b, 0) ** 2 / (xs.length * xs.reduce((a, b) => a + b * b, 0));

interface Figures {
  singleExcess: number[];
  /** Waits of the runs posted in the window, by group: a run not started by its end counts to the end. */
  waits: Map<string, number[]>;
  notStarted: Map<string, number>;
  throughput: number;
  jain: number;
  /** Per group: its executor time over its fair share, while some run waited. */
  shareOfFair: Map<string, number>;
  /** Slots held on average while a run waited; runs posted in the window that started while flood runs older than them waited. */
  busy: number;
  overtook: number;
}

/** Max-min fair shares of `capacity` slots among demands (a group wanting less than an equal part gets what it wants). */
function waterFill(capacity: number, demands: number[]): number[] {
  const order = demands.map((d, i) => [d, i] as const).sort((x, y) => x[0] - y[0]);
  const shares = new Array<number>(demands.length).fill(0);
  let left = capacity;
  order.forEach(([d, i], k) => {
    shares[i] = Math.min(d, left / (order.length - k));
    left -= shares[i]!;
  });
  return shares;
}

/**
 * Fair shares are looked at every SAMPLE_MS of the window while a run waits: the busy slots,
 * water-filled over the groups with runs queued or in flight (each wanting one slot per run), against
 * the slots each holds.
 */
/** Runs posted in the window that started while a flood run (all posted before it) was queued. */
function overtakes(runs: LiveRun[], from: number, to: number): number {
  const flood = runs.filter((r) => r.group === 'flood');
  const started = Float64Array.from(flood.map((r) => r.started)).sort();
  return runs.filter((r) => r.created >= from && r.started <= to && atMost(started, r.started) < flood.length).length;
}

function figures({ runs, from, to }: Phase): Figures {
  const releases = Float64Array.from(runs.filter((r) => r.finished <= to).map((r) => r.finished)).sort();
  const waits = new Map<string, number[]>();
  const notStarted = new Map<string, number>();
  const singleExcess: number[] = [];
  for (const r of runs) {
    if (r.created < from) continue;
    const started = Math.min(r.started, to);
    if (!waits.has(r.group)) waits.set(r.group, []);
    waits.get(r.group)!.push(started - r.created);
    if (r.started > to) notStarted.set(r.group, (notStarted.get(r.group) ?? 0) + 1);
    if (r.group !== 'single') continue;
    // The next slot release after its post: it should start then, not after the runs queued before it.
    const next = releases[atMost(releases, r.created)] ?? to;
    singleExcess.push(Math.max(0, started - next));
  }
  const groups = [...new Set(runs.map((r) => r.group))];
  const sorted = (g: string, pick: (r: LiveRun) => number) =>
    Float64Array.from(runs.filter((r) => r.group === g).map(pick)).sort();
  const times = groups.map((g) => ({
    created: sorted(g, (r) => r.created),
    started: sorted(g, (r) => r.started),
    finished: sorted(g, (r) => r.finished),
  }));
  const used = groups.map(() => 0);
  const fair = groups.map(() => 0);
  let [samples, busy] = [0, 0];
  for (let t = from; t < to; t += SAMPLE_MS) {
    const queued = times.map((x) => atMost(x.created, t) - atMost(x.started, t));
    if (!queued.some((q) => q > 0)) continue;
    const held = times.map((x) => atMost(x.started, t) - atMost(x.finished, t));
    samples++;
    busy += held.reduce((a, b) => a + b, 0);
    const shares = waterFill(
      held.reduce((a, b) => a + b, 0),
      held.map((h, i) => h + queued[i]!),
    );
    held.forEach((h, i) => {
      used[i]! += h;
      fair[i]! += shares[i]!;
    });
  }
  const shareOfFair = new Map(groups.flatMap((g, i) => (fair[i]! > 0 ? [[g, used[i]! / fair[i]!] as const] : [])));
  return {
    singleExcess,
    waits,
    notStarted,
    throughput: (runs.filter((r) => r.finished >= from && r.finished <= to).length * 1000) / (to - from),
    jain: jain([...shareOfFair.values()]),
    shareOfFair,
    busy: busy / Math.max(1, samples),
    overtook: overtakes(runs, from, to),
  };
}

export const queuesLiveScenario: Scenario = {
  name: 'queues-live',
  title: 'The queue rule on three service processes: a flood, single and gate runs, another tenant',
  async run(ctx) {
    const { runs: floodSize, slots, tenantExecutors } = ctx.options.queuesLive;
    const fair = await withTrio(ctx, 'fair');
    const fifo = await withTrio(ctx, 'fifo');
    const f = figures(fair);
    const b = figures(fifo);
    const s = (ms: number) => ms / 1000;
    // A run not started by the window's end counts to the end: its wait is at least that.
    const first = (x: Figures, group: string, value: number) =>
      `first come, first served: ${x.notStarted.get(group) ? '≥ ' : ''}${fmt(value, 's')}`;
    const single = s(quantile(f.singleExcess, 0.99));
    const gate = s(quantile(f.waits.get('gate'), 0.95));
    const quiet = { steps: summarize(fair.quiet.roundTripMs), rest: summarize(fair.quiet.restMs) };
    const flood = { steps: summarize(fair.flood.roundTripMs), rest: summarize(fair.flood.restMs) };
    const rows: Row[] = [
      {
        scenario: 'queues-live',
        measure: 'single run: p99 wait beyond the next slot release',
        value: single,
        unit: 's',
        baseline: first(b, 'single', s(quantile(b.singleExcess, 0.99))),
        target: '≤ 2 s',
        met: single <= 2,
      },
      {
        scenario: 'queues-live',
        measure: 'gate run p95 wait under the flood',
        value: gate,
        unit: 's',
        baseline: first(b, 'gate', s(quantile(b.waits.get('gate'), 0.95))),
        target: '≤ 10 s',
        met: gate <= 10,
      },
      {
        scenario: 'queues-live',
        measure: 'throughput in the window (runs queued throughout)',
        value: f.throughput,
        unit: 'runs/s',
        baseline: `first come, first served: ${fmt(b.throughput, 'runs/s')}`,
        ratio: f.throughput / b.throughput,
        target: '≥ 98% of first-come',
        met: f.throughput / b.throughput >= 0.98,
      },
      {
        scenario: 'queues-live',
        measure: "Jain's index over the groups: executor time / max-min fair share while runs wait",
        value: f.jain,
        unit: '',
        baseline: `first come, first served: ${b.jain.toFixed(3)}`,
        target: '≥ 0.97',
        met: f.jain >= 0.97,
      },
      {
        scenario: 'queues-live',
        measure: 'other tenant: step round trip p99 during the flood',
        value: flood.steps.p99,
        unit: 'ms',
        baseline: `no flood ${fmt(quiet.steps.p99, 'ms')}`,
        ratio: flood.steps.p99 / quiet.steps.p99,
      },
      {
        scenario: 'queues-live',
        measure: 'other tenant: GET /otp/runs?limit=20 p99 during the flood',
        value: flood.rest.p99,
        unit: 'ms',
        baseline: `no flood ${fmt(quiet.rest.p99, 'ms')}`,
        ratio: flood.rest.p99 / quiet.rest.p99,
      },
    ];
    const shares = (x: Figures) => [...x.shareOfFair].map(([g, v]) => `${g} ${pct(v)}`).join(', ');
    const waits = (x: Figures) =>
      [...BURST_GROUPS, 'single', 'gate']
        .map(
          (g) =>
            `${g} ${fmt(s(quantile(x.waits.get(g), 0.99)), 's')} (${x.notStarted.get(g) ?? 0} of ${x.waits.get(g)?.length ?? 0} not started)`,
        )
        .join(', ');
    const tenant = (c: Collected) =>
      `steps p50 ${fmt(summarize(c.roundTripMs).p50, 'ms')} / p99 ${fmt(summarize(c.roundTripMs).p99, 'ms')} (${c.roundTripMs.length}), GET p50 ${fmt(summarize(c.restMs).p50, 'ms')} / p99 ${fmt(summarize(c.restMs).p99, 'ms')} (${c.restMs.length})`;
    const notes = [
      `three service processes on one database, ${slots} executors of maxParallel 1 spread over them (${ctx.options.workers} client processes); runs of 1 or 2 steps, each step answered after ${STEP_DELAY_MS / 2}-${(STEP_DELAY_MS * 3) / 2} ms. The flood: ${fmt(floodSize)} runs queued before the pool's executors connect: one run of each test case POSTed, the rest copies of their rows and steps made in one statement (as if posted at once); then a window of ${fmt(windowMs(ctx) / 1000, 's')}: two burst groups post 30% of the runs ended, every few seconds, a gate run and a single run in turn every tick. Waits from the runs' rows (started_at − created_at; a run not started by the window's end counts to the end).`,
      `slots held on average while a run waited: rule ${fmt(f.busy)}, first-come ${fmt(b.busy)} of ${slots}; runs posted in the window that started while the flood (posted before them) still had runs queued: rule ${f.overtook}, first-come ${b.overtook}; first failed POST: ${firstFailure ?? 'none'}`,
      `runs by status when read (after the window): rule ${JSON.stringify(fair.statuses)}, first-come ${JSON.stringify(fifo.statuses)}; failed POSTs ${fair.postFailures} / ${fifo.postFailures}`,
      `p99 wait of the runs posted in the window: rule ${waits(f)}; first-come ${waits(b)}`,
      `executor time over max-min fair share (every ${SAMPLE_MS} ms while a run waited: the busy slots water-filled over the groups with runs queued or in flight, each wanting one slot per run): rule ${shares(f)}; first-come ${shares(b)}`,
      `the other tenant (a project of its own, ${tenantExecutors} executors, runs of 10 steps pinned to themselves, GET its runs list every 50 ms round-robin over the processes from its client process): alone ${tenant(fair.quiet)}; during the flood ${tenant(fair.flood)}; first-come: alone ${tenant(fifo.quiet)}, during the flood ${tenant(fifo.flood)}`,
    ];
    for (const note of notes) ctx.progress(`queues-live: ${note}`);
    return { rows, notes };
  },
};
