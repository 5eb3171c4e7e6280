// rest: requests per second of GET /api/v1/otp/runs/:id (a finished run) and POST /api/v1/otp/runs
// with autocannon, against a bare Koa hello-world in its own process in the same run. The GET and
// its baseline are measured in alternating rounds (Koa, GET, Koa, GET, ...) and the median ratio is
// reported: on a shared machine the speed drifts by a third within a minute, and a ratio of two
// windows taken far apart measured the drift as much as the service. The service is measured once per
// OTP transport this Node.js loads: REST does not go through it, and the rows show that it stays so.
import autocannon from 'autocannon';
import { loadUws, type TransportName } from '../../src/otp/transport/index.js';
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

type Target = { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string };

function autocannonOptions(ctx: ScenarioContext, request: Target) {
  return { ...request, connections: ctx.options.rest.connections, pipelining: 1 };
}

async function warmUp(ctx: ScenarioContext, request: Target): Promise<void> {
  if (ctx.options.warmup >= 0.5)
    await autocannon({ ...autocannonOptions(ctx, request), duration: Math.ceil(ctx.options.warmup) });
}

async function measure(
  ctx: ScenarioContext,
  label: string,
  request: Target,
  durationS: number,
  pids: () => Promise<Record<string, number[]>>,
): Promise<Load> {
  ctx.progress(`rest/${label}: measuring for ${durationS} s`);
  const meter = cpuMeter(pids);
  await meter.start();
  const result = await autocannon({ ...autocannonOptions(ctx, request), duration: durationS });
  const cpu = await meter.stop();
  const total = result.requests.total;
  return {
    rate: total / (result.duration || durationS),
    p99: result.latency.p99,
    total,
    bad: result.non2xx + result.errors + result.timeouts,
    bytesPerRequest: total ? result.throughput.total / total : NaN,
    cpu: cpuNote(cpu, (result.duration || durationS) * 1000, total).replaceAll('round trip', 'request'),
  };
}

const NO_LOAD: Load = { rate: NaN, p99: NaN, total: 0, bad: 0, bytesPerRequest: NaN, cpu: '' };

/** The round whose ratio is the median (the upper one of an even count). */
function medianRound<T extends { ratio: number }>(rounds: T[]): T {
  const sorted = [...rounds].sort((a, b) => (a.ratio || 0) - (b.ratio || 0));
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** One finished run of `steps` steps, driven by one simulated executor. */
async function finishedRun(service: ServiceUnderTest, testCaseId: string): Promise<string> {
  const fleet = await Fleet.start(1);
  try {
    await fleet.all({
      op: 'otp-connect',
      url: service.otpUrl,
      key: service.key,
      count: 1,
      concurrency: 1,
      maxParallel: 1,
    });
    await fleet.all({
      op: 'otp-drive',
      api: service.api,
      key: service.key,
      testCaseIds: [testCaseId],
      runsAhead: 1,
      stepDelayMs: 0,
      runsPerSession: 1,
    });
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
    const koa = ctx.options.baselines ? await startBaseline('koa-hello') : undefined;
    try {
      const transports: TransportName[] = loadUws().module ? ['uws', 'ws'] : ['ws'];
      const rows: Row[] = [];
      const notes: string[] = [];
      for (const transport of transports) {
        const measured = await restOver(ctx, transport, koa);
        rows.push(...measured.rows);
        notes.push(...measured.notes);
      }
      return { rows, notes };
    } finally {
      await koa?.stop();
    }
  },
};

/** The REST figures of a service whose OTP goes over `transport`, beside Koa in alternating rounds. */
async function restOver(
  ctx: ScenarioContext,
  transport: TransportName,
  koa: Awaited<ReturnType<typeof startBaseline>> | undefined,
) {
  const { connections, stepsPerRun, rounds } = ctx.options.rest;
  const roundS = Math.max(1, Math.round(ctx.options.duration / rounds));
  const service = await ctx.startService({ env: { OTP_TRANSPORT: transport } });
  try {
    const testCaseId = await createTestCase(service, testCaseBody('rest', stepsPerRun));
    const runId = await finishedRun(service, testCaseId);
    const auth = { authorization: `Bearer ${service.key}` };
    const pids = async () => ({
      service: [service.pid],
      postgres: await service.backendPids(),
      autocannon: [process.pid],
    });
    const helloTarget = koa ? { url: `http://127.0.0.1:${koa.port}/` } : undefined;
    const getTarget = { url: `${service.api}/otp/runs/${runId}`, headers: auth };
    if (helloTarget) await warmUp(ctx, helloTarget);
    await warmUp(ctx, getTarget);
    const measured: Array<{ hello: Load; get: Load; ratio: number }> = [];
    for (let round = 1; round <= rounds; round++) {
      const hello = helloTarget
        ? await measure(ctx, `koa-hello ${round}/${rounds}`, helloTarget, roundS, async () => ({
            server: [koa!.pid],
            autocannon: [process.pid],
          }))
        : NO_LOAD;
      const get = await measure(ctx, `GET run ${round}/${rounds} (OTP over ${transport})`, getTarget, roundS, pids);
      measured.push({ hello, get, ratio: get.rate / hello.rate });
    }
    const { hello, get } = medianRound(measured);
    ctx.progress(`rest: Koa hello-world ${fmt(hello.rate)} req/s`);
    ctx.progress(`rest: GET /otp/runs/:id ${fmt(get.rate)} req/s (OTP over ${transport})`);
    const postTarget: Target = {
      url: `${service.api}/otp/runs`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ testCaseIds: [testCaseId] }),
    };
    await warmUp(ctx, postTarget);
    const post = await measure(ctx, `POST run (OTP over ${transport})`, postTarget, ctx.options.duration, pids);
    ctx.progress(`rest: POST /otp/runs ${fmt(post.rate)} req/s (OTP over ${transport})`);
    const { rows: queued } = await service.db.query(`SELECT count(*)::int AS n FROM otp_runs WHERE status = 'queued'`);
    const rows: Row[] = [
      {
        scenario: 'rest',
        measure: `GET /otp/runs/:id req/s (run of ${stepsPerRun} steps; median of ${rounds} rounds; OTP over ${transport})`,
        value: get.rate,
        unit: '/s',
        baseline: `Koa hello ${fmt(hello.rate, '/s')}`,
        ratio: get.rate / hello.rate,
        target: '≥ 50% of Koa',
        met: get.rate / hello.rate >= 0.5 && measured.every((m) => m.get.bad === 0),
      },
      {
        scenario: 'rest',
        measure: `POST /otp/runs req/s (${stepsPerRun} steps, queued; OTP over ${transport})`,
        value: post.rate,
        unit: '/s',
        baseline: `Koa hello ${fmt(hello.rate, '/s')}`,
        ratio: post.rate / hello.rate,
      },
    ];
    return {
      rows,
      notes: [
        `OTP over ${transport}. autocannon in the harness process, ${connections} connections, bearer key on every request; ${ctx.options.warmup} s of warm-up per target, then ${rounds} rounds of ${roundS} s of Koa hello-world and ${roundS} s of GET, alternating; the row gives the round with the median ratio. POST: one window of ${ctx.options.duration} s.`,
        `Rounds (GET / Koa): ${measured.map((m) => `${fmt(m.get.rate)} / ${fmt(m.hello.rate)} = ${(m.ratio * 100).toFixed(0)}%`).join('; ')}.`,
        `Koa hello-world (median round): ${fmt(hello.rate, 'req/s')}, p99 ${fmt(hello.p99, 'ms')}, ${hello.bad} non-2xx/errors. ${hello.cpu}.`,
        `GET /otp/runs/:id (a finished run of ${stepsPerRun} steps, ${fmt(get.bytesPerRequest, 'bytes')} per response): ${fmt(get.rate, 'req/s')}, p99 ${fmt(get.p99, 'ms')}, ${get.bad} non-2xx/errors. ${get.cpu}.`,
        `POST /otp/runs (${stepsPerRun} steps; no executor connected, so every run stays queued: ${fmt(queued[0].n)} piled up): ${fmt(post.rate, 'req/s')}, p99 ${fmt(post.p99, 'ms')}, ${post.bad} non-2xx/errors. ${post.cpu}.`,
      ],
    };
  } finally {
    await service.stop();
  }
}
