// What the runner's tests share: the real service on a fresh database, pages served from loopback
// by the test itself, a real otp-runner (real headless Chromium) and a way to run steps through it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunFinishedPayload } from '../../src/otp/protocol/schemas/messages.js';
import { type Runner, type StartOptions, startRunner } from '../../src/runner/index.js';
import { startTestService, type TestService } from '../support/service.js';

export type Pages = Record<string, string | ((req: http.IncomingMessage, res: http.ServerResponse) => void)>;

/** An HTTP server on 127.0.0.1 serving the given pages (HTML strings or handlers). */
export async function servePages(
  pages: Pages,
): Promise<{ origin: string; url(path: string): string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const page = pages[path];
    if (path === '/favicon.ico' && page === undefined) {
      res.writeHead(204).end(); // no icon, and no 404 in the pages' console errors
    } else if (page === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    } else if (typeof page === 'function') {
      page(req, res);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface RunnerHarness {
  t: TestService;
  runner: Runner;
  key: string;
  projectId: string;
  /** Creates a test case of these steps (each { otp, ... }) and runs it on the runner; answers the finished run. */
  run(steps: unknown[], body?: Record<string, unknown>): Promise<any>;
  /** Posts a run of a test case without waiting; answers its id and a promise of the finished run. */
  start(steps: unknown[], body?: Record<string, unknown>): Promise<{ runId: string; finished: Promise<any> }>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: Partial<StartOptions> = {},
  existing?: TestService,
): Promise<RunnerHarness> {
  const t = existing ?? (await startTestService());
  const { key, projectId } = await t.newProject('write');
  const runner = await startRunner({ server: t.otpUrl, key, backoff: { baseMs: 20, maxMs: 200 }, ...options });
  await runner.ready;
  const waiters = new Map<string, (p: RunFinishedPayload) => void>();
  const done = new Map<string, RunFinishedPayload>();
  runner.on('finished', (runId, payload) => {
    done.set(runId, payload);
    waiters.get(runId)?.(payload);
  });
  const finishedRun = async (runId: string) => {
    if (!done.has(runId)) await new Promise<RunFinishedPayload>((resolve) => waiters.set(runId, resolve));
    const view = await t.request('GET', `/otp/runs/${runId}`, { key });
    return view.body;
  };
  const start: RunnerHarness['start'] = async (steps, body = {}) => {
    const testCase = await t.request('POST', '/tests/cases', { key, body: { title: 'runner test', steps } });
    if (testCase.status !== 201) throw new Error(`test case refused: ${JSON.stringify(testCase.body)}`);
    const run = await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [testCase.body.id], ...body } });
    if (run.status !== 202) throw new Error(`run refused: ${JSON.stringify(run.body)}`);
    const runId = run.body.runId as string;
    return { runId, finished: finishedRun(runId) };
  };
  return {
    t,
    runner,
    key,
    projectId,
    start,
    run: async (steps, body) => (await start(steps, body)).finished,
    stop: async () => {
      await runner.close();
      if (!existing) await t.stop();
    },
  };
}

/** A step of a test case: the action, and a short time-out so that failures fail fast. */
export function step(otp: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { otp, timeoutMs: 3000, ...extra };
}
