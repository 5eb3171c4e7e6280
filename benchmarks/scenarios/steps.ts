// steps: step round trips per second through the whole engine (frame validation, run actor, durable
// step result, next step.exec) against a bare uWebSockets.js and a bare `ws` echo of the same frames,
// driven by the same client fleet at the same concurrency (one frame in flight per executor). The
// engine is measured over each OTP transport this Node.js loads (uWS where it loads, `ws` always),
// each beside the echo server of its own library.

import { loadUws, type TransportName } from '../../src/otp/transport/index.js';
import { Fleet, shares } from '../lib/fleet.js';
import { testCaseBody } from '../lib/frames.js';
import { measureWindow } from '../lib/measure.js';
import { type PgStepWrites, pgStepWrites } from '../lib/pg-step-writes.js';
import { type BaselineKind, channelMeter, cpuMeter, keepTail, sleep, spawnTs, startBaseline } from '../lib/procs.js';
import { cpuNote, fmt, pct, type Row } from '../lib/report.js';
import { createTestCase } from '../lib/service.js';
import type { Scenario, ScenarioContext } from './context.js';

async function baselineRate(
  ctx: ScenarioContext,
  kind: BaselineKind,
): Promise<{ rate: number; cpu: string; serverUs: number }> {
  const { options } = ctx;
  if (!options.baselines) return { rate: NaN, cpu: 'not measured (--no-baselines)', serverUs: NaN };
  const server = await startBaseline(kind);
  const fleet = await Fleet.start(options.workers);
  try {
    const counts = shares(options.steps.executors, fleet.size);
    await fleet.all((i) => ({
      op: 'raw-connect',
      url: `ws://127.0.0.1:${server.port}/otp`,
      count: counts[i]!,
      concurrency: 50,
    }));
    await fleet.all({ op: 'echo-drive', streams: 1, delayMs: 0 });
    const result = await measureWindow(fleet, ctx.progress, `steps/${kind}`, {
      warmupS: options.warmup,
      durationS: options.duration,
      latency: false,
      cpu: cpuMeter(async () => ({ server: [server.pid], clients: fleet.pids })),
    });
    const { roundTrips } = result.window;
    return {
      rate: (roundTrips * 1000) / result.elapsedMs,
      cpu: cpuNote(result.cpu, result.elapsedMs, roundTrips),
      serverUs: result.cpu?.server !== undefined ? (result.cpu.server * 1e6) / Math.max(1, roundTrips) : NaN,
    };
  } finally {
    await fleet.stop();
    await server.stop();
  }
}

/** The service's group-commit statement alone through `pg`, batches of the engine's average size. */
async function pgBaseline(ctx: ScenarioContext, batch: number): Promise<PgStepWrites | undefined> {
  const { options } = ctx;
  if (!options.baselines) return undefined;
  const service = await ctx.startService();
  try {
    const testCaseId = await createTestCase(service, testCaseBody('bench steps', options.steps.stepsPerRun));
    return await pgStepWrites(service, testCaseId, {
      batch,
      stepsPerRun: options.steps.stepsPerRun,
      warmupS: options.warmup,
      durationS: options.duration,
      // A smoke run copies few pending rows first (copying took most of its time), so few that it
      // refills them: every smoke run takes the path of a machine faster than expected.
      ...(options.smoke ? { expectedRate: 50 } : {}),
    });
  } finally {
    await service.stop();
  }
}

/**
 * A step machine alone (benchmarks/machine.ts in a process of its own, its trace taken as the
 * driver takes it): CPU per step of the run machine, or of the cheapest machine of its shape.
 */
async function machineCpuPerStep(ctx: ScenarioContext, machine: 'run' | 'floor'): Promise<number> {
  if (!ctx.options.baselines) return NaN;
  const runs = ctx.options.smoke ? 20 : 600;
  const child = spawnTs('benchmarks/machine.ts', {
    args: [String(runs), String(ctx.options.steps.stepsPerRun), 'fast', machine, '--json'],
  });
  const tail = keepTail(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`benchmarks/machine.ts ${machine} exited (${code}): ${tail()}`);
  return (JSON.parse(out) as { cpuUs: number }).cpuUs;
}

async function engineRate(ctx: ScenarioContext, transport: TransportName) {
  const { options } = ctx;
  const { executors, stepsPerRun, runsPerExecutor } = options.steps;
  const service = await ctx.startService({ inspect: true, env: { OTP_TRANSPORT: transport } });
  const fleet = await Fleet.start(options.workers);
  try {
    const testCaseId = await createTestCase(service, testCaseBody('bench steps', stepsPerRun));
    const counts = shares(executors, fleet.size);
    const connected = await fleet.all<{ ok: number; failed: number; firstError?: string }>((i) => ({
      op: 'otp-connect',
      url: service.otpUrl,
      key: service.key,
      count: counts[i]!,
      concurrency: 50,
      maxParallel: 1,
    }));
    const failed = connected.reduce((n, c) => n + c.failed, 0);
    if (failed)
      throw new Error(`${failed} executors could not connect: ${connected.find((c) => c.firstError)?.firstError}`);
    // Each executor keeps one run in flight and one queued behind it (pinned to its session), so it
    // never waits for a POST between runs.
    await fleet.all({
      op: 'otp-drive',
      api: service.api,
      key: service.key,
      testCaseIds: [testCaseId],
      runsAhead: 2,
      stepDelayMs: 0,
      ...(runsPerExecutor ? { runsPerSession: runsPerExecutor } : {}),
    });
    const target = runsPerExecutor ? executors * runsPerExecutor : Infinity;
    const cpu = cpuMeter(async () => ({
      service: [service.pid],
      postgres: await service.backendPids(),
      clients: fleet.pids,
    }));
    // The group commit as the service reports it (otp:step.write): statements, rows, time to durable.
    const commits = channelMeter(service, 'otp:step.write');
    let written = { p50: NaN, p99: NaN, max: NaN, count: 0, rows: 0 };
    let stopProfile = async () => {};
    const result = await measureWindow(fleet, ctx.progress, `steps/engine over ${transport}`, {
      warmupS: runsPerExecutor ? 0 : options.warmup,
      durationS: runsPerExecutor ? 60 : options.duration,
      latency: false,
      until: () => fleet.totals().runsFinished >= target,
      cpu: {
        start: async () => {
          stopProfile = await service.profileWindow('steps');
          await Promise.all([cpu.start(), commits.start()]);
        },
        stop: async () => {
          const [used, writes] = await Promise.all([cpu.stop(), commits.stop()]);
          await stopProfile();
          written = writes;
          return used;
        },
      },
    });
    // Stop answering, let the last writes land, then check that every result sent is a durable row.
    await fleet.all({ op: 'quiesce' });
    const sent = async () => (await fleet.collect()).reduce((n, c) => n + c.total.resultsSent, 0);
    let resultsSent = await sent();
    let durable = 0;
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      resultsSent = await sent();
      const { rows } = await service.db.query(`SELECT count(*)::int AS n FROM otp_run_steps WHERE source = 'executor'`);
      durable = rows[0].n;
      if (durable >= resultsSent) break;
    }
    return { rate: (result.window.roundTrips * 1000) / result.elapsedMs, result, resultsSent, durable, written };
  } finally {
    await fleet.stop();
    await service.stop();
  }
}

export const stepsScenario: Scenario = {
  name: 'steps',
  title: 'Step round trips through the engine',
  async run(ctx) {
    const { options } = ctx;
    const { executors, stepsPerRun } = options.steps;
    // Where no uWS binding loads (Node.js after 20 here), neither its echo nor the engine over it can run.
    const transports: TransportName[] = loadUws().module ? ['uws', 'ws'] : ['ws'];
    const noUws = { rate: NaN, cpu: 'not measured (no uWebSockets.js binding for this Node.js)', serverUs: NaN };
    const {
      rate: uws,
      cpu: uwsCpu,
      serverUs: uwsServerUs,
    } = transports.includes('uws') ? await baselineRate(ctx, 'uws-echo') : noUws;
    ctx.progress(`steps: uWS baseline ${fmt(uws)} round trips/s`);
    const { rate: ws, cpu: wsCpu, serverUs: wsServerUs } = await baselineRate(ctx, 'ws-echo');
    ctx.progress(`steps: ws baseline ${fmt(ws)} round trips/s`);
    const engines = new Map<TransportName, Awaited<ReturnType<typeof engineRate>>>();
    for (const transport of transports) {
      engines.set(transport, await engineRate(ctx, transport));
      ctx.progress(`steps: engine over ${transport} ${fmt(engines.get(transport)!.rate)} step round trips/s`);
    }
    // The rows of earlier rounds are the fast path's: the engine over uWS where it loads.
    const engine = engines.get(transports[0]!)!;
    const overWs = transports.length > 1 ? engines.get('ws') : undefined;
    const batch = Math.max(1, Math.round(engine.written.rows / Math.max(1, engine.written.count))) || 25;
    const pgWrites = await pgBaseline(ctx, batch);
    const pgRate = pgWrites?.rate ?? NaN;
    if (pgWrites) ctx.progress(`steps: PostgreSQL baseline ${fmt(pgRate)} step writes/s (batches of ${batch})`);
    const cpuOf = (e: typeof engine) =>
      e.result.cpu?.service !== undefined
        ? (e.result.cpu.service * 1e6) / Math.max(1, e.result.window.roundTrips)
        : NaN;
    const cpuPerStep = cpuOf(engine);
    const serverUs = transports[0] === 'uws' ? uwsServerUs : wsServerUs;
    // The floor of the shape: what a step costs the service's process before any of its own work,
    // each part measured alone in this run: the step machine, a uWS server's frame in and out, and
    // pg's share of the step write. The run machine is the one whose tests the issue keeps unchanged.
    const runMachineUs = await machineCpuPerStep(ctx, 'run');
    const floorMachineUs = await machineCpuPerStep(ctx, 'floor');
    const pgClientUs = pgWrites?.clientUs ?? NaN;
    const shapeFloorUs = floorMachineUs + serverUs + pgClientUs;
    const runFloorUs = runMachineUs + serverUs + pgClientUs;
    const wsFloorUs = runMachineUs + wsServerUs + pgClientUs;
    if (options.baselines)
      ctx.progress(
        `steps: run machine ${fmt(runMachineUs)} µs, floor machine ${fmt(floorMachineUs)} µs of CPU per step`,
      );
    const rows: Row[] = [
      // Against the uWS echo only where uWebSockets.js loads; elsewhere the ws rows stand alone.
      ...(transports.includes('uws')
        ? [
            {
              scenario: 'steps',
              measure: `step round trips/s over ${transports[0]} vs uWS (${executors} executors, runs of ${stepsPerRun} steps)`,
              value: engine.rate,
              unit: '/s',
              baseline: `uWS echo ${fmt(uws, '/s')}`,
              ratio: engine.rate / uws,
              target: '≥ 50% of uWS',
              met: engine.rate / uws >= 0.5,
            },
          ]
        : []),
      {
        scenario: 'steps',
        measure: `step round trips/s over ${transports[0]} vs ws`,
        value: engine.rate,
        unit: '/s',
        baseline: `ws echo ${fmt(ws, '/s')}`,
        ratio: engine.rate / ws,
        target: '> ws (> 100%)',
        met: engine.rate > ws,
      },
      {
        scenario: 'steps',
        measure: `step round trips/s vs the group-commit statement alone through pg (batches of ${batch})`,
        value: engine.rate,
        unit: '/s',
        baseline: `pg ${fmt(pgRate, 'writes/s')}`,
        ratio: engine.rate / pgRate,
        target: '≥ 40% of pg',
        met: engine.rate / pgRate >= 0.4,
      },
      {
        scenario: 'steps',
        measure: `service CPU per step over ${transports[0]} (/proc utime + stime over the window)`,
        value: cpuPerStep,
        unit: 'µs',
        target: '< 60 µs',
        met: cpuPerStep < 60,
      },
      ...(overWs
        ? [
            {
              scenario: 'steps',
              measure: 'step round trips/s over ws vs ws',
              value: overWs.rate,
              unit: '/s',
              baseline: `ws echo ${fmt(ws, '/s')}`,
              ratio: overWs.rate / ws,
            },
            {
              scenario: 'steps',
              measure: 'service CPU per step over ws, beside its floor (run machine + ws echo server + pg client)',
              value: cpuOf(overWs),
              unit: 'µs',
              baseline: `floor ${fmt(wsFloorUs, 'µs')}`,
              ratio: cpuOf(overWs) / wsFloorUs,
            },
          ]
        : []),
      {
        scenario: 'steps',
        measure: 'the run machine alone (XState, effects answered at once), CPU per step',
        value: runMachineUs,
        unit: 'µs',
        baseline: `cheapest machine of its shape ${fmt(floorMachineUs, 'µs')}`,
        ratio: runMachineUs / floorMachineUs,
      },
      {
        scenario: 'steps',
        measure: `floor of a step with this run machine: it alone + ${transports[0]} echo server + pg client of the step write`,
        value: runFloorUs,
        unit: 'µs',
        baseline: `service ${fmt(cpuPerStep, 'µs')}`,
        ratio: runFloorUs / cpuPerStep,
        target: '< 60 µs leaves room',
        met: runFloorUs < 60,
      },
      {
        scenario: 'steps',
        measure: `floor of a step of the shape: cheapest step machine + ${transports[0]} echo server + pg client`,
        value: shapeFloorUs,
        unit: 'µs',
        baseline: `service ${fmt(cpuPerStep, 'µs')}`,
        ratio: shapeFloorUs / cpuPerStep,
        target: '< 60 µs leaves room',
        met: shapeFloorUs < 60,
      },
      {
        scenario: 'steps',
        measure: 'step results durable in PostgreSQL (rows / results sent)',
        value: engine.durable,
        unit: 'rows',
        baseline: `${fmt(engine.resultsSent)} sent`,
        ratio: engine.durable / engine.resultsSent,
        target: 'every one',
        met: engine.durable === engine.resultsSent && engine.resultsSent > 0,
      },
    ];
    const w = engine.result.window;
    return {
      rows,
      notes: [
        `${executors} executors in ${ctx.options.workers} worker processes, maxParallel 1, each keeping one run of ${stepsPerRun} steps in flight and one queued; baselines: the same fleet, one step.result-sized frame in flight per connection, answered with a step.exec-sized frame.`,
        `Window ${fmt(engine.result.elapsedMs / 1000)} s: ${fmt(w.roundTrips)} step round trips, ${fmt(w.runsFinished)} runs finished, ${fmt(w.errorFrames)} error frames${engine.result.errorSamples.length ? ` (${engine.result.errorSamples[0]})` : ''}.`,
        ...[...engines].map(
          ([transport, e]) =>
            `Engine over ${transport}: ${fmt(e.rate, 'step round trips/s')}, ${cpuNote(e.result.cpu, e.result.elapsedMs, e.result.window.roundTrips)}.`,
        ),
        `Group commit (otp:step.write): ${fmt(engine.written.count)} statements of ${fmt(engine.written.rows / Math.max(1, engine.written.count))} step results on average, each durable in p50 ${fmt(engine.written.p50)} / p99 ${fmt(engine.written.p99)} / max ${fmt(engine.written.max)} ms.`,
        `uWS echo ${uwsCpu}; ws echo ${wsCpu}.`,
        pgWrites
          ? `PostgreSQL baseline: the service's group-commit statement (RunStore RECORD_STEPS) alone through pg on one connection, one statement in flight, ${pgWrites.batch} pending rows of different runs per statement: ${fmt(pgWrites.rate, 'durable step writes/s')} over ${fmt(pgWrites.statements)} statements (p50 ${fmt(pgWrites.p50)} / p99 ${fmt(pgWrites.p99)} ms each); its backend used ${fmt(pgWrites.backendUs)} µs of CPU per step, its client (building the batch, pg's protocol work) ${fmt(pgWrites.clientUs)} µs${pgWrites.refills ? `; its pending rows ran low ${pgWrites.refills === 1 ? 'once' : `${fmt(pgWrites.refills)} times`} and were refilled, outside the measured time` : ''}.`
          : 'PostgreSQL baseline: not measured (--no-baselines).',
        `The floor of a step, each part alone in this run: the run machine ${fmt(runMachineUs)} µs of CPU (the cheapest machine of its shape, lib/floor-machine.ts: ${fmt(floorMachineUs)} µs; benchmarks/machine.ts, trace as the driver takes it), the ${transports[0]} echo server ${fmt(serverUs)} µs per round trip, pg's client ${fmt(pgClientUs)} µs per step written: ${fmt(runFloorUs)} µs with the run machine, ${fmt(shapeFloorUs)} µs with the cheapest; the service used ${fmt(cpuPerStep)} µs, ${fmt(cpuPerStep - runFloorUs)} µs above the first (validation, sessions, the driver, the store, the trace, diagnostics, the garbage collection of all of it).`,
        `uWS echo ${fmt(uws, 'round trips/s')}, ws echo ${fmt(ws, 'round trips/s')}, engine ${fmt(engine.rate, 'step round trips/s')} (${pct(engine.rate / uws)} of uWS, ${pct(engine.rate / ws)} of ws).`,
      ],
    };
  },
};
