// Storms (issue 36). connect-storm: the largest fleet the open-file limit allows says hello at once
// (STORM_CONCURRENCY handshakes in flight per client process): welcomes per second, each session made
// durable (its row written) as always, against the bare transport's handshakes per second with the
// same clients in the same run. resume-storm: two service processes on one database; the fleet is held
// by A with runs in flight; A is stopped (drain: `reconnect` with a spread retryAfterMs, then 4503) and
// every executor resumes its session on B: the time until all are back, the step latency meanwhile
// against the same fleet's before the drain, runs lost (not passed) and steps performed twice.
import { Fleet, shares } from '../lib/fleet.js';
import { testCaseBody } from '../lib/frames.js';
import { cpuMeter, defaultEcho, sleep, startBaseline } from '../lib/procs.js';
import type { Command } from '../lib/protocol.js';
import { fmt, pct, type Row } from '../lib/report.js';
import { createTestCase, type ServiceUnderTest } from '../lib/service.js';
import { median, merge, summarize } from '../lib/stats.js';
import type { Scenario, ScenarioContext } from './context.js';
import { connectWithProgress, type Plan, plan } from './sessions.js';

const STORM_CONCURRENCY = 100;
// A busy session's run lasts about 10 s (200 steps of 50 ms), two in all: the drain comes 3 s into
// the first and the storm is over before the second ends, so runs are in flight throughout. (With 20
// steps, 1 s a run, a quiet machine finished both before the drain: nothing was in flight.)
const STEPS_PER_RUN = 200;
const SMOKE_STEPS_PER_RUN = 20;
const STEP_DELAY_MS = 50;
const RESUME_WINDOW_MS = 30_000;

/** Opens `count` connections at STORM_CONCURRENCY per client process: OTP executors when `otp` says whose, else bare sockets. */
function connectAll(
  ctx: ScenarioContext,
  fleet: Fleet,
  label: string,
  url: string,
  count: number,
  otp?: { key: string; resumeUrl?: string },
) {
  const parts = shares(count, fleet.size);
  const command = (i: number): Command =>
    otp
      ? { op: 'otp-connect', url, count: parts[i]!, concurrency: STORM_CONCURRENCY, maxParallel: 1, ...otp }
      : { op: 'raw-connect', url, count: parts[i]!, concurrency: STORM_CONCURRENCY };
  return connectWithProgress(
    ctx,
    fleet,
    label,
    fleet.all<{ ok: number; failed: number; firstError?: string }>(command),
  );
}

interface BareRound {
  rate: number;
  /** CPU per handshake in the window, µs: the echo server's and the clients'. */
  serverUs: number;
  clientsUs: number;
}

async function bareRound(ctx: ScenarioContext, count: number, workers: number): Promise<BareRound> {
  const server = await startBaseline(defaultEcho().kind);
  const fleet = await Fleet.start(workers);
  try {
    const cpu = cpuMeter(async () => ({ server: [server.pid], clients: fleet.pids }));
    await cpu.start();
    const started = performance.now();
    const ok = await connectAll(
      ctx,
      fleet,
      `connect-storm/${defaultEcho().kind}`,
      `ws://127.0.0.1:${server.port}/otp`,
      count,
    );
    const elapsedMs = performance.now() - started;
    const used = await cpu.stop();
    const us = (seconds = 0) => (seconds * 1e6) / Math.max(1, ok);
    return { rate: (ok * 1000) / elapsedMs, serverUs: us(used.server), clientsUs: us(used.clients) };
  } finally {
    await fleet.stop();
    await server.stop();
  }
}

interface EngineRound {
  ok: number;
  seconds: number;
  /** Session rows open once every executor was welcomed. */
  held: number;
  /** CPU per welcome in the window, µs: the service's, its PostgreSQL backends', the clients'. */
  serviceUs: number;
  postgresUs: number;
  clientsUs: number;
}

/**
 * One storm on a fresh service: every executor says hello at once. `planFor`: the fleet for a service
 * process (its open-file limit); `profile`: the CPU profile window (--cpu-prof).
 */
async function engineRound(ctx: ScenarioContext, planFor: (pid: number) => Plan, profile: boolean) {
  const service = await ctx.startService({ inspect: true, env: { OTP_KEEPALIVE_SEC: '30' } });
  try {
    const { sessions, workers } = planFor(service.pid);
    const fleet = await Fleet.start(workers);
    try {
      const stopProfile = profile ? await service.profileWindow('connect-storm') : async () => {};
      const cpu = cpuMeter(async () => ({
        service: [service.pid],
        postgres: await service.backendPids(),
        clients: fleet.pids,
      }));
      await cpu.start();
      const started = performance.now();
      const ok = await connectAll(ctx, fleet, 'connect-storm/engine', service.otpUrl, sessions, { key: service.key });
      const seconds = (performance.now() - started) / 1000;
      const used = await cpu.stop();
      await stopProfile();
      const { rows } = await service.db.query(`SELECT count(*)::int AS n FROM otp_sessions WHERE status = 'open'`);
      const us = (cpuSeconds = 0) => (cpuSeconds * 1e6) / Math.max(1, ok);
      return {
        ok,
        seconds,
        held: rows[0].n as number,
        serviceUs: us(used.service),
        postgresUs: us(used.postgres),
        clientsUs: us(used.clients),
      } satisfies EngineRound;
    } finally {
      await fleet.stop();
    }
  } finally {
    await service.stop();
  }
}

export const connectStormScenario: Scenario = {
  name: 'connect-storm',
  title: 'Connect storm: the largest fleet says hello at once',
  async run(ctx) {
    const { rounds, sessions: wanted } = ctx.options.storms;
    let p: Plan | undefined;
    // The fleet is planned once, on the first round's service process.
    const planFor = (pid: number): Plan => {
      if (p) return p;
      p = plan(wanted, pid, ctx.options.smoke);
      ctx.progress(`connect-storm: ${fmt(p.sessions)} executors at once (${p.why}), ${rounds} rounds`);
      return p;
    };
    // The service and the bare transport take turns: a machine that drifts (another process, the
    // page cache, a CPU's clock) moves both sides of a round, and the medians are compared.
    const engine: EngineRound[] = [];
    const bare: BareRound[] = [];
    for (let round = 0; round < rounds; round++) {
      engine.push(await engineRound(ctx, planFor, round === 0));
      if (ctx.options.baselines) bare.push(await bareRound(ctx, p!.sessions, p!.workers));
    }
    const { sessions, workers, why } = p!;
    const rates = engine.map((r) => r.ok / r.seconds);
    const rate = median(rates);
    const bareRate = bare.length ? median(bare.map((b) => b.rate)) : NaN;
    const slowest = engine.reduce((a, b) => (b.seconds > a.seconds ? b : a));
    const everyStored = engine.every((r) => r.ok === sessions && r.held === sessions);
    const rows: Row[] = [
      {
        scenario: 'connect-storm',
        measure: `welcomes per second (${fmt(sessions)} executors, ${STORM_CONCURRENCY} hellos in flight per client process; median of ${rounds})`,
        value: rate,
        unit: '/s',
        baseline: `${defaultEcho().label} ${fmt(bareRate, '/s')} handshakes`,
        ratio: rate / bareRate,
        target: '≥ 50% of bare',
        met: rate / bareRate >= 0.5,
      },
      {
        scenario: 'connect-storm',
        measure: `time until every executor was welcomed (slowest of ${rounds})`,
        value: slowest.seconds,
        unit: 's',
        target: 'every session stored',
        met: everyStored,
      },
    ];
    return {
      rows,
      notes: [
        `${fmt(sessions)} executors over ${workers} client processes (${why}), ${rounds} rounds, the service (a fresh process each round) and the bare ${defaultEcho().label} in turn, with the same clients and concurrency.`,
        ...engine.map((r, i) => {
          const b = bare[i];
          const cpu = `CPU per welcome: service ${fmt(r.serviceUs, 'µs')}, PostgreSQL ${fmt(r.postgresUs, 'µs')}, clients ${fmt(r.clientsUs, 'µs')}`;
          const bareCpu = b
            ? `; bare ${fmt(b.rate, '/s')} handshakes (${pct(rates[i]! / b.rate)}), CPU per handshake: server ${fmt(b.serverUs, 'µs')}, clients ${fmt(b.clientsUs, 'µs')}`
            : '';
          return `Round ${i + 1}: ${fmt(r.ok)} welcomed in ${fmt(r.seconds, 's')} (${fmt(rates[i]!, '/s')}), ${fmt(r.held)} session rows open; ${cpu}${bareCpu}.`;
        }),
      ],
    };
  },
};

interface ResumeFigures {
  sessions: number;
  busy: number;
  /** Runs started and not finished as A was told to stop. */
  inFlight: number;
  backMs: number;
  resumed: number;
  before: ReturnType<typeof summarize>;
  during: ReturnType<typeof summarize>;
  runs: Record<string, number>;
  runsPosted: number;
  performedTwice: number;
  resent: number;
  closes: Record<string, number>;
}

async function waitFor(what: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

async function resumeStorm(ctx: ScenarioContext, b: ServiceUnderTest, a: ServiceUnderTest): Promise<ResumeFigures> {
  const { storms, smoke } = ctx.options;
  const p = plan(storms.sessions, a.pid, smoke);
  const fleet = await Fleet.start(p.workers);
  try {
    const testCaseId = await createTestCase(
      b,
      testCaseBody('resume storm', smoke ? SMOKE_STEPS_PER_RUN : STEPS_PER_RUN),
    );
    const extra = { key: a.key, resumeUrl: b.otpUrl };
    const ok = await connectAll(ctx, fleet, 'resume-storm/connect to A', a.otpUrl, p.sessions, extra);
    const busyPerWorker = Math.ceil(Math.min(storms.busy, ok) / fleet.size);
    const busy = busyPerWorker * fleet.size;
    // Each busy session: one run in flight at a time, two in all, steps of STEP_DELAY_MS on average.
    await fleet.all({
      op: 'otp-drive',
      api: b.api,
      key: b.key,
      testCaseIds: [testCaseId],
      runsAhead: 1,
      stepDelayMs: STEP_DELAY_MS,
      runsPerSession: 2,
      sessions: busyPerWorker,
    });
    await waitFor(() => fleet.totals().runsStarted >= busy, 60_000);
    await fleet.all({ op: 'reset', latency: true });
    await sleep(smoke ? 500 : 3000);
    const before = summarize(merge(await fleet.collect()).roundTripMs);
    await fleet.all({ op: 'reset', latency: true });
    const atDrain = fleet.totals();
    const inFlight = atDrain.runsStarted - atDrain.runsFinished;
    ctx.progress(`resume-storm: ${fmt(ok)} sessions on A, ${fmt(inFlight)} runs in flight; stopping A (drain)`);
    const drainedAt = Date.now();
    // The drain may take the whole resume window handing sessions over: no SIGKILL before it ends.
    const stopping = a.stop(RESUME_WINDOW_MS + 20_000);
    await waitFor(() => fleet.totals().resumed >= ok, RESUME_WINDOW_MS + 15_000);
    const collected = merge(await fleet.collect());
    const backMs = collected.lastResumedAt ? collected.lastResumedAt - drainedAt : NaN;
    ctx.progress(`resume-storm: ${fmt(collected.total.resumed)} of ${fmt(ok)} resumed on B after ${fmt(backMs, 'ms')}`);
    await waitFor(() => fleet.totals().runsFinished >= busy * 2, 120_000);
    await stopping;
    const done = merge(await fleet.collect());
    const { rows } = await b.db.query(`SELECT status, count(*)::int AS n FROM otp_runs GROUP BY status`);
    return {
      sessions: ok,
      busy,
      inFlight,
      backMs,
      resumed: done.total.resumed,
      before,
      during: summarize(done.roundTripMs),
      runs: Object.fromEntries(rows.map((r: { status: string; n: number }) => [r.status, r.n])),
      runsPosted: done.total.posts,
      performedTwice: done.total.performedTwice,
      resent: done.total.resultsResent,
      closes: done.closes,
    };
  } finally {
    await fleet.stop();
  }
}

export const resumeStormScenario: Scenario = {
  name: 'resume-storm',
  title: 'Resume storm: a process holding the fleet is drained, every session resumes on another',
  async run(ctx) {
    // B holds the database (embedded PostgreSQL lives in its process) and survives; A is stopped.
    const env = { OTP_KEEPALIVE_SEC: '30', OTP_RESUME_WINDOW_MS: String(RESUME_WINDOW_MS) };
    const b = await ctx.startService({ env });
    let f: ResumeFigures;
    try {
      const a = await ctx.startService({ env: { ...env, OTP_DRAIN_MS: '500' }, sharedDatabaseUrl: b.dbUrl });
      f = await resumeStorm(ctx, b, a).finally(() => a.stop());
    } finally {
      await b.stop();
    }
    const passed = f.runs.passed ?? 0;
    const lost = f.runsPosted - passed;
    const rows: Row[] = [
      {
        scenario: 'resume-storm',
        measure: `time until every session was back (${fmt(f.sessions)} sessions, ${fmt(f.inFlight)} runs in flight at the drain)`,
        value: f.backMs,
        unit: 'ms',
        baseline: `resume window ${fmt(RESUME_WINDOW_MS, 'ms')}`,
        ratio: f.backMs / RESUME_WINDOW_MS,
        target: 'inside the window',
        met: f.resumed === f.sessions && f.backMs < RESUME_WINDOW_MS,
      },
      {
        scenario: 'resume-storm',
        measure: 'step latency p99 meanwhile (step.result sent → next step.exec)',
        value: f.during.p99,
        unit: 'ms',
        baseline: `before the drain ${fmt(f.before.p99, 'ms')}`,
        ratio: f.during.p99 / f.before.p99,
      },
      {
        scenario: 'resume-storm',
        measure: 'runs lost (posted, not passed)',
        value: lost,
        unit: '',
        baseline: `${fmt(f.runsPosted)} runs posted`,
        target: '0',
        met: lost === 0,
      },
      {
        scenario: 'resume-storm',
        measure: 'steps performed twice',
        value: f.performedTwice,
        unit: '',
        baseline: `${fmt(f.resent)} results re-sent for a step in flight`,
        target: '0',
        met: f.performedTwice === 0,
      },
    ];
    const notes = [
      `${fmt(f.resumed)} of ${fmt(f.sessions)} sessions resumed on B, the last ${fmt(f.backMs, 'ms')} after A was told to stop (OTP_DRAIN_MS=500, then reconnect frames spread over min(1 ms × sessions, window / 3)). Runs by status: ${JSON.stringify(f.runs)}; closes seen by the executors: ${JSON.stringify(f.closes)}.`,
      `Step round trips: before the drain p50 ${fmt(f.before.p50, 'ms')} / p99 ${fmt(f.before.p99, 'ms')} (${f.before.count}); from the drain to the end p50 ${fmt(f.during.p50, 'ms')} / p99 ${fmt(f.during.p99, 'ms')} / max ${fmt(f.during.max, 'ms')} (${f.during.count}; a round trip across the resume includes the executor's wait).`,
    ];
    for (const note of notes) ctx.progress(`resume-storm: ${note}`);
    return { rows, notes };
  },
};
