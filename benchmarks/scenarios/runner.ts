// runner: what the service and otp-runner add to a real browser step. The same N-step flow on a
// loopback page is run (a) by a bare playwright-core script and (b) as an OTP run through the service
// (a child process, as in every scenario) and otp-runner (startRunner, in this process), in the same
// Chromium, on the same machine, rounds alternating so that drift hits both alike. Both create a fresh
// browser context per run. Figures: the time per step of each, the engine's overhead as a ratio at 1
// and at 8 parallel runs, and how many parallel contexts one runner holds before its steps take twice
// as long as with one.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchChromium } from '../../src/runner/browser.js';
import { type Runner, startRunner } from '../../src/runner/index.js';
import { fmt, pct, type Row } from '../lib/report.js';
import { createTestCase, type ServiceUnderTest } from '../lib/service.js';
import { median } from '../lib/stats.js';
import type { Scenario } from './context.js';

export const PAGE = `<!doctype html><title>Bench flow</title>
<label for="item">Item</label> <input id="item"> <button onclick="add()">Add</button>
<p>Items: <span id="count">0</span></p><ul id="items"></ul>
<script>
  function add() {
    const li = document.createElement('li');
    li.textContent = document.getElementById('item').value;
    document.getElementById('items').append(li);
    document.getElementById('count').textContent = String(document.querySelectorAll('#items li').length);
  }
</script>`;

export type FlowStep =
  | { kind: 'navigate' }
  | { kind: 'type'; text: string }
  | { kind: 'click' }
  | { kind: 'assert'; count: number };

/** navigate, then type / click / assert the count, again and again, up to n steps. */
export function flow(n: number): FlowStep[] {
  const steps: FlowStep[] = [{ kind: 'navigate' }];
  for (let i = 1; steps.length < n; i++) {
    steps.push({ kind: 'type', text: `item ${i}` });
    if (steps.length < n) steps.push({ kind: 'click' });
    if (steps.length < n) steps.push({ kind: 'assert', count: i });
  }
  return steps;
}

export function otpSteps(steps: FlowStep[], url: string): unknown[] {
  return steps.map((s) => {
    switch (s.kind) {
      case 'navigate':
        return { otp: { action: 'navigate', url } };
      case 'type':
        return {
          otp: { action: 'type', locator: { by: 'label', value: 'Item' }, text: s.text, clear: true },
          evidence: 'never',
        };
      case 'click':
        return { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Add' } }, evidence: 'never' };
      case 'assert':
        return {
          otp: { action: 'assert', kind: 'text', locator: { by: 'css', value: '#count' }, expected: String(s.count) },
          evidence: 'never',
        };
      default:
        throw new Error(`unknown step kind ${(s as { kind: string }).kind}`);
    }
  });
}

/** The same flow as a bare playwright-core script: the calls the runner makes, nothing around them. */
export async function bareRun(browser: Browser, steps: FlowStep[], url: string): Promise<number> {
  const started = performance.now();
  const context = await browser.newContext();
  const page: Page = await context.newPage();
  for (const s of steps) {
    if (s.kind === 'navigate') await page.goto(url, { waitUntil: 'load' });
    else if (s.kind === 'type') {
      const field = page.getByLabel('Item');
      await field.fill('');
      await field.pressSequentially(s.text);
    } else if (s.kind === 'click') await page.getByRole('button', { name: 'Add' }).click();
    else {
      const count = page.locator('css=#count');
      while ((await count.innerText()) !== String(s.count)) await new Promise((r) => setTimeout(r, 10));
    }
  }
  // Timed as the service's run is: up to its last step (the runner closes the context after run.finished).
  const elapsed = performance.now() - started;
  await context.close();
  return elapsed;
}

interface Through {
  runner: Runner;
  service: ServiceUnderTest;
  testCaseId: string;
  finished: Map<string, (at: number) => void>;
}

/** One OTP run through the service and the runner: POST /otp/runs → run.finished at the runner. */
async function serviceRun(through: Through): Promise<number> {
  const started = performance.now();
  let done!: (at: number) => void;
  const ended = new Promise<number>((resolve) => (done = resolve));
  const { runId } = await through.service.request<{ runId: string; status: string }>('POST', '/otp/runs', {
    testCaseIds: [through.testCaseId],
  });
  through.finished.set(runId, done);
  const at = await ended;
  through.finished.delete(runId);
  return at - started;
}

/** Per-step milliseconds of each of `parallel` runs at once (run duration / steps). */
async function batch(parallel: number, steps: number, one: () => Promise<number>): Promise<number[]> {
  return (await Promise.all(Array.from({ length: parallel }, one))).map((ms) => ms / steps);
}

const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${fmt(Math.abs(ms))}`;

export const runnerScenario: Scenario = {
  name: 'runner',
  title: 'A real browser step through the service and otp-runner vs bare playwright-core',
  async run(ctx) {
    const { options, progress } = ctx;
    const { stepsPerRun, rounds, probeMax, parallel } = options.runner;
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const steps = flow(stepsPerRun);
    const chromium = await findChromium();
    const browser = await launchChromium(chromium.path);
    const service = await ctx.startService();
    let runner: Runner | undefined;
    try {
      const testCaseId = await createTestCase(service, {
        title: 'runner bench',
        steps: otpSteps(steps, url),
      });
      // One runner for every phase, with room for the most runs any phase posts at once: how many run
      // together is set by how many are posted (one browser launch instead of one per phase).
      const start = async (maxParallel: number): Promise<Through> => {
        const r = await startRunner({ server: service.otpUrl, key: service.key, maxParallel, chromium: chromium.path });
        await r.ready;
        const through: Through = { runner: r, service, testCaseId, finished: new Map() };
        r.on('finished', (runId, payload) => {
          if (payload.status !== 'passed') progress(`runner: run ${runId} ended ${payload.status}`);
          through.finished.get(runId)?.(performance.now());
        });
        return through;
      };
      const through = await start(Math.min(64, Math.max(probeMax, ...parallel)));
      runner = through.runner;
      const rows: Row[] = [];
      const notes: string[] = [];
      const compare = async (parallel: number) => {
        // warm-up: one of each
        await bareRun(browser, steps, url);
        await serviceRun(through);
        const bareSamples: number[] = [];
        const servedSamples: number[] = [];
        // What the runner itself spent performing steps (its step.result durationMs), per run.
        let inRunner = 0;
        const count = (_runId: string, result: { durationMs?: number }) => void (inRunner += result.durationMs ?? 0);
        for (let r = 0; r < rounds; r++) {
          bareSamples.push(...(await batch(parallel, steps.length, () => bareRun(browser, steps, url))));
          through.runner.on('result', count);
          servedSamples.push(...(await batch(parallel, steps.length, () => serviceRun(through))));
          through.runner.off('result', count);
          progress(
            `runner: ×${parallel} round ${r + 1}/${rounds}: bare ${fmt(median(bareSamples))} ms/step, through the service ${fmt(median(servedSamples))} ms/step (medians so far)`,
          );
        }
        const bare = median(bareSamples);
        const served = median(servedSamples);
        const outside =
          (servedSamples.reduce((a, b) => a + b, 0) * steps.length - inRunner) / (servedSamples.length * steps.length);
        const overhead = (served - bare) / bare;
        rows.push(
          {
            scenario: 'runner',
            measure: `time per step, bare playwright-core (${parallel} run${parallel > 1 ? 's' : ''} at once)`,
            value: bare,
            unit: 'ms',
          },
          {
            scenario: 'runner',
            measure: `time per step, through the service + otp-runner (${parallel} at once)`,
            value: served,
            unit: 'ms',
            baseline: `bare ${fmt(bare, 'ms')}`,
            ratio: served / bare,
          },
          {
            scenario: 'runner',
            measure: `engine overhead per step at ${parallel} parallel (service − bare) / bare`,
            value: overhead * 100,
            unit: '%',
            target: '< 10%',
            met: overhead < 0.1,
          },
          {
            scenario: 'runner',
            measure: `of a step through the service (${parallel} at once), time outside the runner's steps (context opening included)`,
            value: outside,
            unit: 'ms',
          },
        );
        return { bare, served, outside };
      };
      const [one, eight] = [await compare(parallel[0]!), await compare(parallel[1]!)];
      // Capacity: double the runs at once until a step takes twice as long as with one.
      const probe: Array<[number, number]> = [];
      let holds = 1;
      for (let p = 1; p <= probeMax; p *= 2) {
        const samples: number[] = [];
        for (let r = 0; r < Math.max(1, Math.round(rounds / 2)); r++)
          samples.push(...(await batch(p, steps.length, () => serviceRun(through))));
        const ms = median(samples);
        probe.push([p, ms]);
        progress(`runner: capacity probe ×${p}: ${fmt(ms)} ms/step`);
        if (ms >= 2 * probe[0]![1]) break;
        holds = p;
      }
      rows.push({
        scenario: 'runner',
        measure: 'parallel contexts one runner holds before a step takes 2× the time of one',
        value: holds,
        unit: holds === 1 ? 'context' : 'contexts',
      });
      notes.push(
        `Flow of ${steps.length} steps on a loopback page (navigate, then type with clear / click / assert text, repeated); every run opens a fresh browser context, both ways. ${rounds} alternating rounds per parallelism, after one warm-up run of each; figures are medians over the runs (run duration / steps).`,
        `Time outside the runner's step work: per step, (run wall time − the durationMs the runner reported for its steps) / steps, the mean over runs: what the service, the protocol, the run's start and end (opening the browser context included, which the bare figure also pays) and the runner's own bookkeeping add, ×${parallel[0]} ${fmt(one.outside)} ms, ×${parallel[1]} ${fmt(eight.outside)} ms.`,
        `Chromium: ${chromium.path} (${chromium.source}), headless, one browser for the bare script and one in the runner.`,
        `Through the service, a run is timed from POST /otp/runs to run.finished at the runner: it includes the POST, dispatch, run.start, each step's durable write and the next step.exec, and the runner's own work (locator counts, the origin guard on every request, console listeners).`,
        `×${parallel[0]}: bare ${fmt(one.bare)} ms/step, service + runner ${fmt(one.served)} ms/step (${signed(one.served - one.bare)} ms). ×${parallel[1]}: bare ${fmt(eight.bare)} ms/step, service + runner ${fmt(eight.served)} ms/step (${signed(eight.served - eight.bare)} ms); overhead ${pct((one.served - one.bare) / one.bare)} and ${pct((eight.served - eight.bare) / eight.bare)}.`,
        `Capacity probe (runs at once → ms per step through the service): ${probe.map(([p, ms]) => `×${p} ${fmt(ms)}`).join(', ')}; a step first took 2× its time alone ${probe.length && probe.at(-1)![1] >= 2 * probe[0]![1] ? `at ×${probe.at(-1)![0]}` : `nowhere up to ×${probeMax}`}.`,
      );
      return { rows, notes };
    } finally {
      await runner?.close();
      await browser.close();
      await service.stop();
      server.close();
      server.closeAllConnections();
    }
  },
};
