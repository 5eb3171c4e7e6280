// history: the ai/* answers over a long history. Builds 100,000 finished runs and 5 million step
// results in the service's fresh database (benchmarks/lib/history-dataset.ts: set-based SQL, triggers
// off, so the service meets them as history from before it ran), lets the service's backfill sign
// every failure, then times GET /ai/failures (several filters) and a triage, each request alone, in
// rounds alternating with the baseline: GET /otp/runs/{id} of a 50-step run, a plain REST read of the
// same database in the same run. Target: p95 under 200 ms for each.
import { performance } from 'node:perf_hooks';
import { buildHistory, FULL_HISTORY, SMOKE_HISTORY } from '../lib/history-dataset.js';
import { sleep } from '../lib/procs.js';
import { fmt, type Row } from '../lib/report.js';
import type { ServiceUnderTest } from '../lib/service.js';
import type { Scenario, ScenarioContext } from './context.js';

const TARGET_MS = 200;

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

async function timed(service: ServiceUnderTest, method: string, path: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${service.api}${path}`, { method, headers: { authorization: `Bearer ${service.key}` } });
  await res.arrayBuffer();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
  return ms;
}

async function backfilled(ctx: ScenarioContext, service: ServiceUnderTest, expected: number): Promise<number> {
  const began = Date.now();
  for (;;) {
    const { rows } = await service.db.query('SELECT count(*)::int AS n FROM ai_case_outcomes');
    if (rows[0].n >= expected) return Date.now() - began;
    if (Date.now() - began > 20 * 60_000)
      throw new Error(`backfill stalled at ${rows[0].n} of ${expected} case outcomes`);
    ctx.progress(`history: backfill ${rows[0].n} of ${expected} case outcomes`);
    await sleep(2_000);
  }
}

export const historyScenario: Scenario = {
  name: 'history',
  title: 'GET /ai/failures and a triage over 100,000 runs and 5 million step results',
  async run(ctx) {
    const shape = ctx.options.smoke ? SMOKE_HISTORY : FULL_HISTORY;
    // A sweep a second: the backfill reads 20 batches of 500 runs per sweep.
    // The probes are ai/* calls: the quota must not stop them (40 rounds of five).
    const service = await ctx.startService({ env: { HEARTBEAT_MS: '1000', AI_CALLS_PER_MONTH: '1000000000' } });
    try {
      const {
        rows: [owner],
      } = await service.db.query('SELECT tenant_id, project_id FROM api_keys LIMIT 1');
      ctx.progress(`history: building ${shape.runs} runs of ${shape.casesPerRun * shape.stepsPerCase} steps`);
      const history = await buildHistory(
        service.dbUrl,
        { tenantId: owner.tenant_id, projectId: owner.project_id },
        shape,
      );
      ctx.progress(
        `history: built ${history.steps} step results in ${(history.buildMs / 1000).toFixed(1)} s; waiting for the backfill`,
      );
      const backfillMs = await backfilled(ctx, service, shape.runs * shape.casesPerRun);
      const {
        rows: [counts],
      } = await service.db.query(
        'SELECT (SELECT count(*) FROM ai_failures)::int AS failures, (SELECT count(*) FROM ai_failure_signatures)::int AS signatures',
      );
      const {
        rows: [worst],
      } = await service.db.query(
        `SELECT id FROM otp_runs WHERE status = 'failed' ORDER BY failed DESC, finished_at DESC LIMIT 1`,
      );
      const since = encodeURIComponent(new Date(Date.now() - shape.days * 86_400_000).toISOString());
      const probes: Array<[string, string, string]> = [
        ['GET /ai/failures (30 days)', 'GET', '/ai/failures'],
        [`GET /ai/failures (${shape.days} days, all history)`, 'GET', `/ai/failures?since=${since}`],
        ['GET /ai/failures?status=new (30 days)', 'GET', '/ai/failures?status=new'],
        [
          `GET /ai/failures?testCaseId (${shape.days} days)`,
          'GET',
          `/ai/failures?since=${since}&testCaseId=${history.testCaseId(7)}`,
        ],
        [
          `POST /ai/runs/{id}/triage (a run of ${shape.casesPerRun} cases, the most failed)`,
          'POST',
          `/ai/runs/${worst.id}/triage`,
        ],
      ];
      const baseline: [string, string] = ['GET', `/otp/runs/${worst.id}`];
      const rounds = ctx.options.smoke ? 3 : 40;
      const samples = new Map<string, number[]>(probes.map(([label]) => [label, []]));
      const base: number[] = [];
      for (const [, method, path] of probes) await timed(service, method, path); // warm-up
      await timed(service, ...baseline);
      for (let i = 0; i < rounds; i++) {
        base.push(await timed(service, ...baseline));
        for (const [label, method, path] of probes) samples.get(label)!.push(await timed(service, method, path));
      }
      const baseP95 = percentile(base, 0.95);
      const rows: Row[] = probes.map(([label]) => {
        const p95 = percentile(samples.get(label)!, 0.95);
        return {
          scenario: 'history',
          measure: `${label}: p95`,
          value: p95,
          unit: 'ms',
          baseline: `GET /otp/runs/{id} (50 steps) p95 ${fmt(baseP95, 'ms')}`,
          ratio: p95 / baseP95,
          target: `< ${TARGET_MS} ms`,
          met: p95 < TARGET_MS,
        };
      });
      const notes = [
        `History: ${history.runs.toLocaleString('en-US')} runs, ${history.steps.toLocaleString('en-US')} step results over ${shape.days} days (${shape.casesPerRun} cases × ${shape.stepsPerCase} steps a run, ${shape.testCases} test cases), ${history.failedCases.toLocaleString('en-US')} failed cases; built in ${(history.buildMs / 1000).toFixed(1)} s with set-based SQL.`,
        `Backfill by the service (every failure signed, every case outcome written): ${(backfillMs / 1000).toFixed(1)} s, ${Math.round((shape.runs / backfillMs) * 1000)} runs/s; ${counts.failures.toLocaleString('en-US')} failures in ${counts.signatures.toLocaleString('en-US')} signatures.`,
        `Each figure: ${rounds} requests one at a time, in rounds alternating with the baseline; p50 ${probes.map(([label]) => `${label} ${fmt(percentile(samples.get(label)!, 0.5), 'ms')}`).join('; ')}; baseline p50 ${fmt(percentile(base, 0.5), 'ms')}.`,
      ];
      return { rows, notes };
    } finally {
      await service.stop();
    }
  },
};
