// `npm run bench [-- scenario ... --option=value ...]`: runs the scenarios against a real service
// process on loopback, each with its baseline in the same run; progress on stderr, the table on
// stdout, and on a full run (every scenario, default sizes) the generated part of RESULTS.md.
import fs from 'node:fs/promises';
import path from 'node:path';
import { HELP, parseOptions, type ScenarioName } from './lib/options.js';
import { ROOT } from './lib/procs.js';
import { describeMachine, describePostgres, type Row, table, writeResults } from './lib/report.js';
import { type ServiceUnderTest, startService } from './lib/service.js';
import type { Scenario, ScenarioContext } from './scenarios/context.js';
import { extensionScenario } from './scenarios/extension.js';
import { flakyScenario } from './scenarios/flaky.js';
import { historyScenario } from './scenarios/history.js';
import { latencyScenario } from './scenarios/latency.js';
import { queuesScenario } from './scenarios/queues.js';
import { queuesLiveScenario } from './scenarios/queues-live.js';
import { restScenario } from './scenarios/rest.js';
import { runnerScenario } from './scenarios/runner.js';
import { scalingScenario } from './scenarios/scaling.js';
import { sessionsScenario } from './scenarios/sessions.js';
import { stepsScenario } from './scenarios/steps.js';
import { connectStormScenario, resumeStormScenario } from './scenarios/storms.js';

/** Smoke scenarios run at the same time (the full run takes them one by one). */
const SMOKE_AT_ONCE = 3;

const SCENARIOS: Record<ScenarioName, Scenario> = {
  steps: stepsScenario,
  scaling: scalingScenario,
  sessions: sessionsScenario,
  latency: latencyScenario,
  rest: restScenario,
  runner: runnerScenario,
  extension: extensionScenario,
  history: historyScenario,
  flaky: flakyScenario,
  queues: queuesScenario,
  'queues-live': queuesLiveScenario,
  'connect-storm': connectStormScenario,
  'resume-storm': resumeStormScenario,
};

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const options = parsed;
  if (options.cpuProfDir === 'true') options.cpuProfDir = 'benchmarks/profiles';
  if (options.cpuProfDir) {
    options.cpuProfDir = path.resolve(ROOT, options.cpuProfDir);
    await fs.mkdir(options.cpuProfDir, { recursive: true });
  }
  const began = Date.now();
  const elapsed = () => `${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s`;
  const progress = (line: string) => process.stderr.write(`[bench ${elapsed()}] ${line}\n`);
  progress(
    `scenarios: ${options.scenarios.join(', ')}${options.smoke ? ' (smoke)' : ''}; database: ${options.databaseUrl ? 'fresh databases on DATABASE_URL' : 'embedded PostgreSQL'}`,
  );

  let postgres: string | undefined;
  const ctx: ScenarioContext = {
    options,
    progress,
    startService: async (extra = {}) => {
      const service: ServiceUnderTest = await startService({
        databaseUrl: options.databaseUrl,
        cpuProfDir: options.cpuProfDir,
        ...extra,
      });
      postgres ??= await describePostgres(
        service.db,
        options.databaseUrl ? 'server at DATABASE_URL, a fresh database per scenario' : 'embedded',
      );
      return service;
    },
  };

  const runOne = async (name: ScenarioName) => {
    const scenario = SCENARIOS[name];
    progress(`${name}: ${scenario.title}`);
    try {
      const result = await scenario.run(ctx);
      return { rows: result.rows, notes: { title: `${name}: ${scenario.title}`, lines: result.notes }, failed: false };
    } catch (err) {
      progress(`${name} FAILED: ${(err as Error).stack ?? err}`);
      const row: Row = {
        scenario: name,
        measure: `failed: ${String((err as Error).message ?? err).split('\n')[0]}`,
        value: NaN,
        unit: '',
      };
      return { rows: [row], notes: undefined, failed: true };
    }
  };
  // Scenarios run one after the other, each on a machine otherwise idle; the smoke run only checks
  // that the harness works, so there a few run at a time to keep it short. All twelve at once
  // overloaded a 2-core machine until services answered 503 database_unavailable.
  const results = await inTurns(options.scenarios, options.smoke ? SMOKE_AT_ONCE : 1, runOne);
  const rows = results.flatMap((r) => r.rows);
  const notes = results.flatMap((r) => (r.notes ? [r.notes] : []));
  const failed = results.some((r) => r.failed);

  process.stdout.write(`${table(rows)}\n`);
  if (options.json) await fs.writeFile(options.json, JSON.stringify({ rows, notes }, null, 2));
  if (options.write && !failed) {
    const command = `${options.databaseUrl ? 'DATABASE_URL=… ' : ''}npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
    await writeResults(path.join(ROOT, options.resultsFile), {
      date: new Date(),
      command,
      machine: describeMachine(postgres ?? 'unknown'),
      durationS: (Date.now() - began) / 1000,
      rows,
      notes,
    });
    progress(`wrote ${options.resultsFile}`);
  }
  progress(`done in ${elapsed().trim()}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);

/** Each item's work, at most `atOnce` at a time; the answers in the items' order. */
async function inTurns<T, R>(items: readonly T[], atOnce: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const answers: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      answers[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
  return answers;
}
