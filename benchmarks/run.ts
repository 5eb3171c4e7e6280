// `npm run bench [-- scenario ... --option=value ...]`: runs the scenarios against a real service
// process on loopback, each with its baseline in the same run; progress on stderr, the table on
// stdout, and on a full run (every scenario, default sizes) the generated part of RESULTS.md.
import fs from 'node:fs/promises';
import path from 'node:path';
import { HELP, parseOptions, type ScenarioName } from './lib/options.js';
import { describeMachine, describePostgres, table, writeResults, type Row } from './lib/report.js';
import { ROOT } from './lib/procs.js';
import { startService, type ServiceUnderTest } from './lib/service.js';
import type { Scenario, ScenarioContext } from './scenarios/context.js';
import { stepsScenario } from './scenarios/steps.js';
import { sessionsScenario } from './scenarios/sessions.js';
import { latencyScenario } from './scenarios/latency.js';
import { restScenario } from './scenarios/rest.js';

const SCENARIOS: Record<ScenarioName, Scenario> = {
  steps: stepsScenario,
  sessions: sessionsScenario,
  latency: latencyScenario,
  rest: restScenario,
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
      const service: ServiceUnderTest = await startService({ databaseUrl: options.databaseUrl, cpuProfDir: options.cpuProfDir, ...extra });
      postgres ??= await describePostgres(service.db, options.databaseUrl ? 'server at DATABASE_URL, a fresh database per scenario' : 'embedded');
      return service;
    },
  };

  const rows: Row[] = [];
  const notes: Array<{ title: string; lines: string[] }> = [];
  let failed = false;
  for (const name of options.scenarios) {
    const scenario = SCENARIOS[name];
    progress(`${name}: ${scenario.title}`);
    try {
      const result = await scenario.run(ctx);
      rows.push(...result.rows);
      notes.push({ title: `${name}: ${scenario.title}`, lines: result.notes });
    } catch (err) {
      failed = true;
      progress(`${name} FAILED: ${(err as Error).stack ?? err}`);
      rows.push({ scenario: name, measure: `failed: ${String((err as Error).message ?? err).split('\n')[0]}`, value: NaN, unit: '' });
    }
  }

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
