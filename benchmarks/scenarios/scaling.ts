// scaling: the cost curve as the fleet grows. The same drive as `steps` (each executor keeps one run
// in flight and one queued, steps answered at once) at several fleet sizes, each on a fresh service
// and database: steps/s, the service's CPU per step and its step.result → step.exec latency (POST →
// run.start is the latency scenario's: here a posted run waits behind the one in flight). One size
// is driven again at half the step rate it reached, the load at which its latency is held to a target.
import { Fleet, shares } from '../lib/fleet.js';
import { testCaseBody } from '../lib/frames.js';
import { measureWindow } from '../lib/measure.js';
import { channelMeter, cpuMeter, loopDelayMeter } from '../lib/procs.js';
import { cpuNote, fmt, type Row } from '../lib/report.js';
import { createTestCase } from '../lib/service.js';
import type { Scenario, ScenarioContext } from './context.js';

interface Point {
  executors: number;
  stepDelayMs: number;
  rate: number;
  cpuUs: number;
  served: { p50: number; p99: number; max: number; count: number };
  /** The group commit (otp:step.write): statements, rows, time to durable. */
  written: { p50: number; p99: number; max: number; count: number; rows: number };
  loopDelay: { p50: number; p99: number; max: number };
  note: string;
}

async function drive(ctx: ScenarioContext, executors: number, stepDelayMs: number): Promise<Point> {
  const { options } = ctx;
  const { stepsPerRun } = options.scaling;
  const service = await ctx.startService({ inspect: true });
  const fleet = await Fleet.start(options.workers);
  try {
    const testCaseId = await createTestCase(service, testCaseBody('scaling', stepsPerRun));
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
    await fleet.all({
      op: 'otp-drive',
      api: service.api,
      key: service.key,
      testCaseIds: [testCaseId],
      runsAhead: 2,
      stepDelayMs,
    });
    const cpu = cpuMeter(async () => ({ service: [service.pid] }));
    const inService = channelMeter(service, 'otp:step.dispatch');
    const commits = channelMeter(service, 'otp:step.write');
    const loop = loopDelayMeter(service);
    let served = { p50: NaN, p99: NaN, max: NaN, count: 0 };
    let written = { ...served, rows: 0 };
    let loopDelay = { p50: NaN, p99: NaN, max: NaN };
    let stopProfile = async () => {};
    const label = `scaling/${executors}${stepDelayMs ? ` at ${stepDelayMs} ms a step` : ''}`;
    const result = await measureWindow(fleet, ctx.progress, label, {
      warmupS: options.warmup,
      durationS: options.duration,
      latency: false,
      cpu: {
        start: async () => {
          stopProfile = await service.profileWindow(`scaling-${executors}${stepDelayMs ? '-paced' : ''}`);
          await Promise.all([cpu.start(), inService.start(), commits.start(), loop.start()]);
        },
        stop: async () => {
          const [used, measured, writes, delay] = await Promise.all([
            cpu.stop(),
            inService.stop(),
            commits.stop(),
            loop.stop(),
          ]);
          await stopProfile();
          served = measured;
          written = writes;
          loopDelay = delay;
          return used;
        },
      },
    });
    const steps = result.window.roundTrips;
    return {
      executors,
      stepDelayMs,
      rate: (steps * 1000) / result.elapsedMs,
      cpuUs: result.cpu?.service !== undefined ? (result.cpu.service * 1e6) / Math.max(1, steps) : NaN,
      served,
      written,
      loopDelay,
      note: `${label}: ${fmt(steps)} steps and ${fmt(result.window.runsFinished)} runs finished in ${fmt(result.elapsedMs / 1000)} s; ${cpuNote(result.cpu, result.elapsedMs, steps)}${result.window.errorFrames ? `; ${result.window.errorFrames} error frames (${result.errorSamples[0]})` : ''}.`,
    };
  } finally {
    await fleet.stop();
    await service.stop();
  }
}

export const scalingScenario: Scenario = {
  name: 'scaling',
  title: 'Steps/s, CPU per step and latency as the fleet grows',
  async run(ctx) {
    const { fleets, halfLoadAt, stepsPerRun } = ctx.options.scaling;
    const points: Point[] = [];
    for (const executors of fleets) points.push(await drive(ctx, executors, 0));
    // Half the step rate this fleet reached: each executor waits long enough between steps.
    const full = points.find((p) => p.executors === halfLoadAt)!;
    const halfDelay = Math.max(1, Math.round((halfLoadAt * 1000) / (full.rate / 2)));
    const half = await drive(ctx, halfLoadAt, halfDelay);
    const rows: Row[] = points.flatMap((p) => [
      { scenario: 'scaling', measure: `${fmt(p.executors)} executors: step round trips/s`, value: p.rate, unit: '/s' },
      {
        scenario: 'scaling',
        measure: `${fmt(p.executors)} executors: service CPU per step`,
        value: p.cpuUs,
        unit: 'µs',
      },
      {
        scenario: 'scaling',
        measure: `${fmt(p.executors)} executors: in the service, step.result → step.exec p99`,
        value: p.served.p99,
        unit: 'ms',
      },
    ]);
    rows.push({
      scenario: 'scaling',
      measure: `${fmt(halfLoadAt)} executors at half their maximum (${fmt(half.rate, 'steps/s')}): in the service, step.result → step.exec p99`,
      value: half.served.p99,
      unit: 'ms',
      baseline: `at full load ${fmt(full.served.p99, 'ms')}`,
      target: '< 10 ms',
      met: half.served.p99 < 10,
    });
    const line = (p: Point) =>
      `${fmt(p.executors)} executors${p.stepDelayMs ? ` (each step ${p.stepDelayMs} ms at the executor)` : ''}: ${fmt(p.rate, 'steps/s')}, ${fmt(p.cpuUs, 'µs')} of service CPU per step; in the service step.result → step.exec p50 ${fmt(p.served.p50)} / p99 ${fmt(p.served.p99)} / max ${fmt(p.served.max)} ms, of which the group commit p50 ${fmt(p.written.p50)} / p99 ${fmt(p.written.p99)} ms (${fmt(p.written.rows / Math.max(1, p.written.count))} rows a statement); event-loop delay p50 ${fmt(p.loopDelay.p50)} / p99 ${fmt(p.loopDelay.p99)} / max ${fmt(p.loopDelay.max)} ms.`;
    return {
      rows,
      notes: [
        `Each executor keeps one run of ${stepsPerRun} steps in flight and one queued (pinned to its session), maxParallel 1, in ${ctx.options.workers} worker processes; a fresh service and database per size; ${ctx.options.duration} s measured after ${ctx.options.warmup} s of warm-up.`,
        ...[...points, half].map(line),
        ...[...points, half].map((p) => p.note),
      ],
    };
  },
};
