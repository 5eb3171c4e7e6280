// The result table (stdout, RESULTS.md) and the description of the machine it was measured on.
import fs from 'node:fs/promises';
import os from 'node:os';
import type pg from 'pg';

/** One line of the table: a figure of the engine, its baseline in the same run, and its target. */
export interface Row {
  scenario: string;
  measure: string;
  /** The figure, always a number (NaN when it could not be measured). */
  value: number;
  unit: string;
  baseline?: string;
  /** value / baseline figure, when the two compare. */
  ratio?: number;
  target?: string;
  met?: boolean;
}

export interface ScenarioResult {
  rows: Row[];
  /** Parameters and observations, one line each, for RESULTS.md. */
  notes: string[];
}

export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return 'n/a';
  const digits = Math.abs(value) >= 100 || Number.isInteger(value) ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return unit ? `${text} ${unit}` : text;
}

export function pct(ratio: number): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)}%` : 'n/a';
}

export function table(rows: Row[]): string {
  const header = ['Scenario', 'Measure', 'Figure', 'Baseline (same run)', 'Ratio', 'Target', 'Met'];
  const lines = rows.map((r) => [
    r.scenario,
    r.measure,
    fmt(r.value, r.unit),
    r.baseline ?? '',
    r.ratio === undefined ? '' : pct(r.ratio),
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(line)].join('\n');
}

export interface Machine {
  cores: string;
  memory: string;
  node: string;
  postgres: string;
  os: string;
}

/** The server version and the settings that matter for durable writes. */
export async function describePostgres(client: pg.Client, where: string): Promise<string> {
  const version = (await client.query('SHOW server_version')).rows[0].server_version as string;
  const settings = await client.query(
    `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections') ORDER BY name`,
  );
  return `PostgreSQL ${version} (${where}; ${settings.rows.map((r) => `${r.name}=${r.setting}`).join(', ')})`;
}

export function describeMachine(postgres: string): Machine {
  const cpus = os.cpus();
  return {
    cores: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    postgres,
    os: `${os.type()} ${os.release()}`,
  };
}

const BEGIN = '<!-- bench:begin (written by npm run bench on a full run; edit outside these markers) -->';
const END = '<!-- bench:end -->';

/** Replaces the generated part of RESULTS.md, keeping what people wrote around it. */
export async function writeResults(
  file: string,
  run: {
    date: Date;
    command: string;
    machine: Machine;
    durationS: number;
    rows: Row[];
    notes: Array<{ title: string; lines: string[] }>;
  },
): Promise<void> {
  const generated = [
    BEGIN,
    `## Latest full run`,
    '',
    `- Date: ${run.date.toISOString().replace('T', ' ').slice(0, 16)} UTC (took ${Math.round(run.durationS)} s)`,
    `- Command: \`${run.command}\``,
    `- Machine: ${run.machine.cores}, ${run.machine.memory}, ${run.machine.os}`,
    `- Node: ${run.machine.node}`,
    `- Database: ${run.machine.postgres}`,
    '',
    table(run.rows),
    '',
    ...run.notes.flatMap((n) => [`### ${n.title}`, '', ...n.lines.map((l) => `- ${l}`), '']),
    END,
  ].join('\n');
  let existing = '';
  try {
    existing = await fs.readFile(file, 'utf8');
  } catch {
    existing = '# Benchmark results\n\n';
  }
  const start = existing.indexOf(BEGIN);
  const end = existing.indexOf(END);
  const next =
    start >= 0 && end > start
      ? existing.slice(0, start) + generated + existing.slice(end + END.length)
      : `${existing.trimEnd()}\n\n${generated}\n`;
  await fs.writeFile(file, next);
}

/** "service 0.95 cores (310 µs per round trip), postgres 0.40 cores (...)" for the notes. */
export function cpuNote(cpu: Record<string, number> | undefined, windowMs: number, roundTrips: number): string {
  if (!cpu) return 'CPU: not measured';
  const seconds = windowMs / 1000;
  return `CPU in the window: ${Object.entries(cpu)
    .map(
      ([group, used]) =>
        `${group} ${(used / seconds).toFixed(2)} cores (${fmt((used * 1e6) / Math.max(1, roundTrips))} µs per round trip)`,
    )
    .join(', ')}`;
}
