// `otp run`: start a run, follow it, leave reports, and exit with its verdict (options.ts says how).
import fs from 'node:fs/promises';
import type { ReportedRun } from '../reports/case-results.js';
import { runToCtrf } from '../reports/ctrf.js';
import { runToJunit } from '../reports/junit.js';
import { ServiceClient, ServiceError } from './client.js';
import { parseRunArgs, type RunOptions, USAGE, UsageError } from './options.js';
import { Progress } from './progress.js';

export const EXIT = { passed: 0, failed: 1, couldNotRun: 2 } as const;

type Run = ReportedRun & {
  status: string;
  sessionId: string | null;
  counts: { passed: number; failed: number; skipped: number; total: number };
};

const FINAL = new Set(['passed', 'failed', 'cancelled', 'error']);
const POLL_MS = 500;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
  /** Resolves when the user interrupts (Ctrl-C); the run is then cancelled. */
  interrupted: Promise<void>;
}

export async function runCommand(argv: string[], io: Io): Promise<number> {
  let options: RunOptions | 'help';
  try {
    options = parseRunArgs(argv, io.env, io.isTty);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`otp run: ${err.message}\n\n${USAGE}`);
    return EXIT.couldNotRun;
  }
  if (options === 'help') {
    io.out(USAGE);
    return EXIT.passed;
  }
  const progress = new Progress(io.out, options.tty);
  try {
    return await follow(options, progress, io);
  } catch (err) {
    progress.line(
      `otp run: could not run: ${err instanceof ServiceError || err instanceof TypeError ? describe(err) : (err as Error).message}`,
    );
    return EXIT.couldNotRun;
  }
}

function describe(err: ServiceError | TypeError): string {
  // fetch's TypeError ("fetch failed") hides the reason in its cause (ECONNREFUSED, ...).
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return err instanceof TypeError
    ? `the service did not answer (${cause?.code ?? cause?.message ?? err.message})`
    : err.message;
}

async function follow(options: RunOptions, progress: Progress, io: Io): Promise<number> {
  const client = await ServiceClient.connect(options.server, options.auth);
  const target = 'labels' in options.target ? await casesLabelled(client, options.target.labels) : options.target;
  const started = await client.request<Run>('POST', '/otp/runs', {
    ...target,
    ...(Object.keys(options.vars).length ? { vars: options.vars } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.retries !== undefined ? { retries: options.retries } : {}),
    ...options.queue,
  });
  const link = `${options.server}/console/runs/${started.id}`;
  progress.line(
    `run ${started.id}: ${started.testCases.length} test cases, ${started.steps.length} steps, ${started.status} — ${link}`,
  );
  if (options.secretNames.length)
    progress.line(`secrets from the environment: ${options.secretNames.join(', ')} (values not shown)`);

  const deadline = Date.now() + options.timeoutMs;
  let interrupted = false;
  void io.interrupted.then(() => (interrupted = true));
  let run = started;
  progress.update(run);
  while (!FINAL.has(run.status)) {
    if (interrupted || Date.now() > deadline) {
      const why = interrupted
        ? 'interrupted'
        : `not finished within ${options.timeoutMs / 1000} s${run.status === 'queued' ? ' (no executor of the project took it)' : ''}`;
      progress.line(`otp run: ${why}; cancelling ${run.id}`);
      run = await client.request<Run>('POST', `/otp/runs/${run.id}/cancel`).catch(() => run);
      progress.finish(run);
      await writeReports(options, client, run, progress);
      return EXIT.couldNotRun;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    run = await client.request<Run>('GET', `/otp/runs/${run.id}`);
    progress.update(run);
  }
  progress.finish(run);
  await writeReports(options, client, run, progress);
  const seconds = ((run.durationMs ?? 0) / 1000).toFixed(1);
  progress.line(
    `${run.status.toUpperCase()}: ${run.counts.passed} steps passed, ${run.counts.failed} failed, ${run.counts.skipped} skipped in ${seconds} s${run.reason ? ` (${run.reason})` : ''} — ${link}`,
  );
  return run.status === 'passed' ? EXIT.passed : EXIT.failed;
}

async function casesLabelled(client: ServiceClient, labels: string[]): Promise<{ testCaseIds: string[] }> {
  const query = labels.map((label) => `labels=${encodeURIComponent(label)}`).join('&');
  const cases = await client.all<{ id: string; createdAt: string }>(`/tests/cases?${query}&sort=createdAt`);
  if (!cases.length)
    throw new UsageError(`no test case has the label${labels.length > 1 ? 's' : ''} ${labels.join(', ')}`);
  return { testCaseIds: cases.map((c) => c.id) };
}

async function writeReports(options: RunOptions, client: ServiceClient, run: Run, progress: Progress): Promise<void> {
  if (options.junit) {
    await fs.writeFile(options.junit, runToJunit(run, options.server));
    progress.line(`JUnit report: ${options.junit}`);
  }
  if (options.ctrf) {
    const session = run.sessionId
      ? await client
          .request<{ executor: string; name: string | null; version: string | null }>(
            'GET',
            `/otp/sessions/${run.sessionId}`,
          )
          .catch(() => undefined)
      : undefined;
    const browser = session ? [session.name ?? session.executor, session.version].filter(Boolean).join(' ') : undefined;
    await fs.writeFile(
      options.ctrf,
      `${JSON.stringify(runToCtrf(run, { baseUrl: options.server, ...(browser ? { browser } : {}) }), null, 2)}\n`,
    );
    progress.line(`CTRF report: ${options.ctrf}`);
  }
}
