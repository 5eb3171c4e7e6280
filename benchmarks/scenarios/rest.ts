// rest: requests per second of GET /api/v1/otp/runs/:id (a finished run) and POST /api/v1/otp/runs
// with autocannon, against a bare Koa hello-world in its own process in the same run.
import autocannon from 'autocannon';
import { Fleet } from '../lib/fleet.js';
import { testCaseBody } from '../lib/frames.js';
import { cpuMeter, sleep, startBaseline } from '../lib/procs.js';
import { cpuNote, fmt, type Row } from '../lib/report.js';
import { createTestCase, type ServiceUnderTest } from '../lib/service.js';
import type { Scenario, ScenarioContext } from './context.js';

interface Load {
  rate: number;
  p99: number;
  total: number;
  bad: number;
  bytesPerRequest: number;
  cpu: string;
}

async function load(
  ctx: ScenarioContext,
  label: string,
  request: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  pids: () => Promise<Record<string, number[]>>,
): Promise<Load> {
  const { options } = ctx;
  const base = { ...request, connections: options.rest.connections, pipelining: 1 };
  if (options.warmup >= 0.5) await autocannon({ ...base, duration: Math.ceil(options.warmup) });
  ctx.progress(`rest/${label}: measuring for ${options.duration} s`);
  const meter = cpuMeter(pids);
  await meter.start();
  const result = await autocannon({ ...base, duration: options.duration });
  const cpu = await meter.stop();
  const total = result.requests.total;
  return {
    rate: total / (result.duration || options.duration),
    p99: result.latency.p99,
    total,
    bad: result.non2xx + result.errors + result.timeouts,
    bytesPerRequest: total ? result.throughput.total / total : NaN,
    cpu: cpuNote(cpu, (result.duration || options.duration) * 1000, total).replaceAll('round trip', 'request'),
  };
}

/** One finished run of `steps` steps, driven by one simulated executor. */
async function finishedRun(ctx: ScenarioContext, service: ServiceUnderTest, testCaseId: string): Promise<string> {
  const fleet = await Fleet.start(1);
  try {
    await fleet.all({ op: 'otp-connect', url: service.otpUrl, key: service.key, count: 1, concurrency: 1, maxParallel: 1 });
    await fleet.all({ op: 'otp-drive', api: service.api, key: service.key, testCaseIds: [testCaseId], runsAhead: 1, stepDelayMs: 0, runsPerSession: 1 });
    for (let i = 0; i < 100; i++) {
      const { items } = await service.request<{ items: Array<{ id: string }> }>('GET', '/otp/runs?status=passed');
      if (items.length) return items[0]!.id;
      await sleep(100);
    }
    throw new Error('the run for the REST scenario did not finish');
  } finally {
    await fleet.stop();
  }
}

export const restScenario: Scenario = {
  name: 'rest',
  title: 'REST requests per second',
  async run(ctx) {
    const { connections, stepsPerRun } = ctx.options.rest;
    let hello: Load = { rate: NaN, p99: NaN, total: 0, bad: 0, bytesPerRequest: NaN, cpu: '' };
    if (ctx.options.baselines) {
      const koa = await startBaseline('koa-hello');
      try {
        hello = await load(ctx, 'koa-hello', { url: `http://127.0.0.1:${koa.port}/` }, async () => ({ server: [koa.pid], autocannon: [process.pid] }));
      } finally {
        await koa.stop();
      }
    }
    ctx.progress(`rest: Koa hello-world ${fmt(hello.rate)} req/s`);

    const service = await ctx.startService();
    try {
      const testCaseId = await createTestCase(service, `rest ${stepsPerRun} steps`, testCaseBody('rest', stepsPerRun));
      const runId = await finishedRun(ctx, service, testCaseId);
      const auth = { authorization: `Bearer ${service.key}` };
      const pids = async () => ({ service: [service.pid], postgres: await service.backendPids(), autocannon: [process.pid] });
      const get = await load(ctx, 'GET run', { url: `${service.api}/otp/runs/${runId}`, headers: auth }, pids);
      ctx.progress(`rest: GET /otp/runs/:id ${fmt(get.rate)} req/s`);
      const post = await load(ctx, 'POST run', {
        url: `${service.api}/otp/runs`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ testCaseIds: [testCaseId] }),
      }, pids);
      ctx.progress(`rest: POST /otp/runs ${fmt(post.rate)} req/s`);
      const { rows: queued } = await service.db.query(`SELECT count(*)::int AS n FROM otp_runs WHERE status = 'queued'`);
      const rows: Row[] = [
        {
          scenario: 'rest', measure: `GET /otp/runs/:id req/s (run of ${stepsPerRun} steps)`, value: get.rate, unit: '/s',
          baseline: `Koa hello ${fmt(hello.rate, '/s')}`, ratio: get.rate / hello.rate, target: '≥ 50% of Koa', met: get.rate / hello.rate >= 0.5 && get.bad === 0,
        },
        {
          scenario: 'rest', measure: `POST /otp/runs req/s (${stepsPerRun} steps, queued)`, value: post.rate, unit: '/s',
          baseline: `Koa hello ${fmt(hello.rate, '/s')}`, ratio: post.rate / hello.rate,
        },
      ];
      return {
        rows,
        notes: [
          `autocannon in the harness process, ${connections} connections, ${ctx.options.duration} s per target after ${ctx.options.warmup} s of warm-up, bearer key on every request.`,
          `Koa hello-world: ${fmt(hello.rate, 'req/s')}, p99 ${fmt(hello.p99, 'ms')}, ${hello.bad} non-2xx/errors. ${hello.cpu}.`,
          `GET /otp/runs/:id (a finished run of ${stepsPerRun} steps, ${fmt(get.bytesPerRequest, 'bytes')} per response): ${fmt(get.rate, 'req/s')}, p99 ${fmt(get.p99, 'ms')}, ${get.bad} non-2xx/errors. ${get.cpu}.`,
          `POST /otp/runs (${stepsPerRun} steps; no executor connected, so every run stays queued: ${fmt(queued[0].n)} piled up): ${fmt(post.rate, 'req/s')}, p99 ${fmt(post.p99, 'ms')}, ${post.bad} non-2xx/errors. ${post.cpu}.`,
        ],
      };
    } finally {
      await service.stop();
    }
  },
};
