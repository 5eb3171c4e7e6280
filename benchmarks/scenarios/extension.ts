// extension: a real browser step through the service and the browser extension, against the same
// flow as a bare playwright-core script and through otp-runner, in the same run. The flow is the
// runner scenario's (navigate, then type with clear / click / assert text, repeated, on a loopback
// page); the extension is built into a temporary folder and loaded unpacked by Debian's Chromium in a
// persistent context, as its tests do; otp-runner is started in this process. Rounds alternate bare,
// runner and extension, one run at a time (the extension's default: one run at once). Figures are
// medians of run duration / steps; through the service, a run is timed from POST /otp/runs to its
// run.finished at the executor.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Worker } from 'playwright-core';
import { buildExtension } from '../../extension/build/build.js';
import { launchChromium } from '../../src/runner/browser.js';
import { type Runner, startRunner } from '../../src/runner/index.js';
import { fmt, pct, type Row } from '../lib/report.js';
import { createTestCase, type ServiceUnderTest } from '../lib/service.js';
import { median } from '../lib/stats.js';
import type { Scenario } from './context.js';
import { bareRun, flow, otpSteps, PAGE } from './runner.js';

const CHROMIUM = '/usr/bin/chromium';

async function launchExtension(
  service: ServiceUnderTest,
): Promise<{ context: BrowserContext; worker: Worker; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'otp-bench-ext-'));
  const ext = await buildExtension(path.join(dir, 'extension'));
  const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: null,
    args: [`--disable-extensions-except=${ext}`, `--load-extension=${ext}`, '--no-sandbox'],
  });
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  const serviceUrl = service.api.replace(/\/api\/v1$/, '');
  await worker.evaluate((s) => (globalThis as any).chrome.storage.local.set(s), { serviceUrl, token: service.key });
  return { context, worker, dir };
}

/** POST /otp/runs on one session, then the executor's run.finished: the run's wall time in ms. */
async function postRun(
  service: ServiceUnderTest,
  testCaseId: string,
  sessionId: string,
  finished: (runId: string) => Promise<void>,
) {
  const started = performance.now();
  const { runId } = await service.request<{ runId: string }>('POST', '/otp/runs', {
    testCaseIds: [testCaseId],
    sessionId,
  });
  await finished(runId);
  return performance.now() - started;
}

export const extensionScenario: Scenario = {
  name: 'extension',
  title: 'A real browser step through the service and the browser extension vs otp-runner and bare playwright-core',
  async run(ctx) {
    const { options, progress } = ctx;
    const { stepsPerRun, rounds } = options.runner;
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const steps = flow(stepsPerRun);
    const browser = await launchChromium(CHROMIUM);
    const service = await ctx.startService();
    let runner: Runner | undefined;
    let ext: Awaited<ReturnType<typeof launchExtension>> | undefined;
    try {
      const testCaseId = await createTestCase(service, { title: 'extension bench', steps: otpSteps(steps, url) });
      runner = await startRunner({ server: service.otpUrl, key: service.key, chromium: CHROMIUM });
      await runner.ready;
      const runnerDone = new Map<string, () => void>();
      const runnerSeen = new Set<string>();
      runner.on('finished', (runId, payload) => {
        if (payload.status !== 'passed') progress(`extension: otp-runner's run ${runId} ended ${payload.status}`);
        runnerSeen.add(runId);
        runnerDone.get(runId)?.();
      });
      const runnerFinished = (runId: string) =>
        runnerSeen.has(runId) ? Promise.resolve() : new Promise<void>((resolve) => runnerDone.set(runId, resolve));
      ext = await launchExtension(service);
      const extensionSession = await ext.worker.evaluate(() => (globalThis as any).otpExtension.welcomed());
      const worker = ext.worker;
      const extensionFinished = (runId: string) =>
        worker.evaluate((id) => (globalThis as any).otpExtension.finished(id), runId) as Promise<void>;
      const ways = {
        bare: () => bareRun(browser, steps, url),
        runner: () => postRun(service, testCaseId, runner!.sessionId!, runnerFinished),
        extension: () => postRun(service, testCaseId, extensionSession, extensionFinished),
      };
      const samples: Record<keyof typeof ways, number[]> = { bare: [], runner: [], extension: [] };
      for (const way of Object.values(ways)) await way(); // warm-up: one of each
      for (let r = 0; r < rounds; r++) {
        for (const [name, way] of Object.entries(ways) as Array<[keyof typeof ways, () => Promise<number>]>)
          samples[name].push((await way()) / steps.length);
        progress(
          `extension: round ${r + 1}/${rounds}: bare ${fmt(median(samples.bare))}, otp-runner ${fmt(median(samples.runner))}, extension ${fmt(median(samples.extension))} ms/step (medians so far)`,
        );
      }
      const bare = median(samples.bare);
      const viaRunner = median(samples.runner);
      const viaExtension = median(samples.extension);
      const rows: Row[] = [
        { scenario: 'extension', measure: 'time per step, bare playwright-core', value: bare, unit: 'ms' },
        {
          scenario: 'extension',
          measure: 'time per step, through the service + otp-runner',
          value: viaRunner,
          unit: 'ms',
          baseline: `bare ${fmt(bare, 'ms')}`,
          ratio: viaRunner / bare,
        },
        {
          scenario: 'extension',
          measure: 'time per step, through the service + the extension',
          value: viaExtension,
          unit: 'ms',
          baseline: `bare ${fmt(bare, 'ms')}`,
          ratio: viaExtension / bare,
        },
        {
          scenario: 'extension',
          measure: "the extension's time per step against otp-runner's, (extension − runner) / runner",
          value: ((viaExtension - viaRunner) / viaRunner) * 100,
          unit: '%',
          baseline: `otp-runner ${fmt(viaRunner, 'ms')}`,
          target: '≤ 25%',
          met: viaExtension <= viaRunner * 1.25,
        },
      ];
      const notes = [
        `Flow of ${steps.length} steps on a loopback page (the runner scenario's); ${rounds} rounds alternating bare, otp-runner and the extension, one run at a time, after one warm-up run of each; medians of run duration / steps. bare ${fmt(bare)} ms/step, otp-runner ${fmt(viaRunner)} ms/step (${pct((viaRunner - bare) / bare)} over bare), extension ${fmt(viaExtension)} ms/step (${pct((viaExtension - bare) / bare)} over bare, ${pct((viaExtension - viaRunner) / viaRunner)} against otp-runner).`,
        `Each run of the extension opens a window of its own and attaches the debugger to its tab; each of otp-runner and the bare script opens a fresh browser context. Chromium: ${CHROMIUM}, headless; the extension in a persistent context (it cannot load otherwise), the others in a launched browser.`,
      ];
      return { rows, notes };
    } finally {
      await runner?.close();
      await ext?.context.close();
      if (ext) fs.rmSync(ext.dir, { recursive: true, force: true });
      await browser.close();
      await service.stop();
      server.close();
      server.closeAllConnections();
    }
  },
};
