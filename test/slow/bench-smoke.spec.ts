// A few-second run of the benchmark harness (`npm run bench -- --smoke`), so that it cannot rot:
// every scenario must come back with numeric figures. Speed is not asserted here: the figures of
// a smoke run mean nothing, only the full run in benchmarks/RESULTS.md does.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { loadUws } from '../../src/otp/transport/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'benchmarks/run.ts', ...args], {
      cwd: ROOT,
      env: process.env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The rows of the markdown table the harness prints: cells by column name. */
function parseTable(stdout: string): Array<Record<string, string>> {
  const lines = stdout.split('\n').filter((l) => l.startsWith('|'));
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
  const header = cells(lines[0] ?? '|');
  return lines.slice(2).map((line) => Object.fromEntries(cells(line).map((c, i) => [header[i], c])));
}

describe('benchmarks: smoke run of the harness', function () {
  // Fourteen scenarios, three at a time, two of them in real Chromium (runner, extension): about 160 s
  // on a busy 2-core machine.
  this.timeout(480_000);

  it('runs every scenario with its baseline and prints a figure for each', async () => {
    const { code, stdout, stderr } = await runBench(['--smoke']);
    // The scenarios that failed say why on a line of their own: first those, then the end of the log.
    const failures = stderr.split('\n').filter((line) => / FAILED: /.test(line));
    expect(code, `npm run bench -- --smoke failed:\n${failures.join('\n')}\n…\n${stderr.slice(-2000)}`).to.equal(0);
    const rows = parseTable(stdout);
    expect(rows.length).to.be.greaterThan(0);
    expect(rows.filter((r) => r.Measure?.startsWith('failed'))).to.deep.equal([]);
    for (const scenario of [
      'steps',
      'scaling',
      'sessions',
      'latency',
      'rest',
      'runner',
      'extension',
      'history',
      'flaky',
    ]) {
      const mine = rows.filter((r) => r.Scenario === scenario);
      expect(mine, `no row for ${scenario}`).to.not.be.empty;
      for (const row of mine) {
        // "1,234 /s", "11.9 KiB", "0 ms": a number, never n/a.
        expect(row.Figure, `${scenario}: ${row.Measure}`).to.match(/^-?[\d,]+(\.\d+)?( \S+)?$/);
      }
    }
    // Each scenario measured its baseline in the same run.
    const baselines = rows.map((r) => r['Baseline (same run)']).join(' ');
    // The uWS echo only where uWebSockets.js loads (not on Node.js after 20 here): there the ws echo stands in.
    const echoes = loadUws().module ? ['uWS echo', 'ws echo'] : ['ws echo'];
    for (const name of [...echoes, 'Koa hello', 'bare ']) expect(baselines).to.include(name);
    expect(baselines).to.not.include('n/a');
    // Progress lines go to stderr, the table alone to stdout.
    expect(stderr).to.match(/\[bench\s+\d+ s\] steps/);
    expect(stdout).to.not.include('[bench');
  });

  it('refuses an unknown scenario with the usage', async () => {
    const { code, stderr } = await runBench(['nosuch']);
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown scenario "nosuch"');
    expect(stderr).to.include('Scenarios: steps, scaling, sessions, latency, rest');
  });
});
