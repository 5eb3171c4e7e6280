// The rooms of docs/architecture.md, checked: every relative import of src/ and machines/ must go to
// a room the table allows, the rooms form no cycle, tables are touched by their owners only, and
// only the config module reads process.env. A change that breaks the layout fails here, not in review.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

/** Room -> the rooms it may import (besides itself and the kernel). Mirrors docs/architecture.md. */
const MAY_IMPORT: Record<string, string[]> = {
  kernel: [],
  machines: [],
  validation: [],
  db: [],
  auth: ['db'],
  rest: ['validation', 'db', 'auth'],
  'otp/protocol': ['machines', 'validation'],
  'otp/store': ['machines', 'db', 'rest', 'assets'],
  'otp/engine': ['machines', 'validation', 'otp/protocol', 'otp/store', 'auth', 'db'],
  'otp/runs': ['machines', 'validation', 'otp/protocol', 'otp/store', 'otp/engine', 'auth', 'rest'],
  'otp/transport': ['otp/engine', 'otp/protocol', 'auth', 'machines'],
  'otp/http': ['otp/runs', 'otp/engine', 'otp/store', 'otp/protocol', 'rest', 'assets', 'machines', 'reports'],
  assets: ['rest', 'validation', 'db', 'auth', 'machines'],
  artifacts: ['rest', 'validation', 'db', 'auth', 'otp/protocol', 'otp/engine', 'otp/store', 'machines'],
  platform: ['rest', 'db', 'auth', 'api-keys'],
  'api-keys': ['rest', 'db', 'auth'],
  // The reference executor, a program of its own: the wire format and nothing of the service's inside.
  runner: ['otp/protocol'],
  // Reports of a run (JUnit, CTRF) from its REST view: pure, for the CLI and REST alike.
  reports: [],
  // `otp`, the command line for CI: a REST client of its own, like the runner.
  cli: ['reports'],
  oauth: ['db', 'auth'],
  mcp: ['validation', 'auth', 'rest', 'otp/runs', 'otp/http', 'otp/store', 'otp/engine', 'artifacts'],
  'webhook-delivery': ['rest', 'validation', 'db', 'artifacts', 'otp/http'],
  console: ['auth', 'rest', 'db', 'machines', 'otp/protocol', 'otp/runs', 'otp/store', 'otp/engine'],
  observability: ['otp/engine', 'rest'],
};
const KERNEL = new Set(['config.ts', 'log.ts', 'ids.ts', 'errors.ts', 'tiers.ts', 'free-port.ts', 'lifecycle.ts']);
const ROOT_FILES = new Set(['service.ts', 'main.ts']);

/** Tables and the one room whose code may name them (migrations in db/ aside). */
const TABLE_OWNERS: Record<string, string> = {
  otp_runs: 'otp/store',
  otp_run_steps: 'otp/store',
  otp_sessions: 'otp/store',
  otp_recordings: 'otp/store',
  otp_recording_events: 'otp/store',
  service_instances: 'otp/store',
  artifacts: 'artifacts',
  artifact_links: 'artifacts',
  project_usage: 'artifacts',
  api_keys: 'auth',
  oauth_models: 'oauth',
  oauth_signing_keys: 'oauth',
  oauth_revoked_tokens: 'oauth',
  oauth_secrets: 'oauth',
  webhook_events: 'webhook-delivery',
  webhook_deliveries: 'webhook-delivery',
  webhook_attempts: 'webhook-delivery',
  webhook_health: 'webhook-delivery',
};

/** About 400 lines: a file a newcomer reads whole. */
const MAX_LINES = 420;

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function roomOf(file: string): string {
  const parts = path.relative(root, file.replace(/\.js$/, '.ts')).split(path.sep);
  if (parts[0] === 'machines') return 'machines';
  if (parts[0] === 'db') return 'db'; // migrations belong to the db room
  if (parts[0] !== 'src') return 'outside';
  if (parts.length === 2) return KERNEL.has(parts[1]!) ? 'kernel' : ROOT_FILES.has(parts[1]!) ? 'root' : `unknown:${parts[1]}`;
  if (parts[1] === 'otp') return `otp/${parts[2]}`;
  return parts[1]!;
}

/** Code without comments, so that a comment naming a table or a room is not an offence. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

interface SourceFile {
  file: string;
  rel: string;
  room: string;
  text: string;
}

const files: SourceFile[] = [...walk(path.join(root, 'src')), ...walk(path.join(root, 'machines'))].map((file) => ({
  file,
  rel: path.relative(root, file),
  room: roomOf(file),
  text: fs.readFileSync(file, 'utf8'),
}));

function importsOf(source: SourceFile): string[] {
  return [...source.text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!);
}

describe('Architecture: rooms and their imports', () => {
  it('puts every source file in a known room', () => {
    const unknown = files.filter((f) => f.room.startsWith('unknown:')).map((f) => f.rel);
    expect(unknown).to.deep.equal([]);
  });

  it('imports only from the rooms each room may use', () => {
    const offences: string[] = [];
    for (const source of files) {
      for (const spec of importsOf(source)) {
        if (source.room === 'machines') {
          if (!spec.startsWith('.') && spec !== 'xstate') offences.push(`${source.rel}: ${spec} (machines/ imports only xstate)`);
        }
        if (!spec.startsWith('.')) continue;
        const target = roomOf(path.resolve(path.dirname(source.file), spec));
        if (target === source.room || target === 'kernel' || source.room === 'root') continue;
        if (!(MAY_IMPORT[source.room] ?? []).includes(target)) offences.push(`${source.rel} -> ${spec} (${source.room} may not import ${target})`);
      }
    }
    expect(offences).to.deep.equal([]);
  });

  it('has no cycle between rooms', () => {
    const edges = new Map<string, Set<string>>();
    for (const source of files) {
      for (const spec of importsOf(source)) {
        if (!spec.startsWith('.')) continue;
        const target = roomOf(path.resolve(path.dirname(source.file), spec));
        if (target === source.room) continue;
        edges.set(source.room, (edges.get(source.room) ?? new Set()).add(target));
      }
    }
    const cycles = new Set<string>();
    const visit = (room: string, trail: string[]) => {
      if (trail.includes(room)) return void cycles.add([...trail.slice(trail.indexOf(room)), room].join(' -> '));
      for (const next of edges.get(room) ?? []) visit(next, [...trail, room]);
    };
    for (const room of edges.keys()) visit(room, []);
    expect([...cycles]).to.deep.equal([]);
  });

  it('lets only the owning room name a table in its code', () => {
    const offences: string[] = [];
    for (const source of files) {
      const body = code(source.text);
      for (const [table, owner] of Object.entries(TABLE_OWNERS)) {
        if (source.room === owner) continue;
        const named = new RegExp(`(\\b(db|trx|knex|from|into|join|leftJoin|table)(<[^>]*>)?\\(\\s*['"\`]${table}\\b|\\b(FROM|INTO|UPDATE|JOIN)\\s+${table}\\b)`).test(body);
        if (named) offences.push(`${source.rel} names ${table} (owned by ${owner})`);
      }
    }
    expect(offences).to.deep.equal([]);
  });

  it('reads process.env only in the config module (and the runner and the CLI, programs of their own, in their options modules)', () => {
    const allowed = new Set(['src/config.ts', 'src/runner/options.ts', 'src/cli/options.ts']);
    const readers = files.filter((f) => !allowed.has(f.rel) && /process\.env/.test(code(f.text))).map((f) => f.rel);
    expect(readers).to.deep.equal([]);
  });

  it('keeps source files short enough to read whole', () => {
    const long = files
      .filter((f) => f.text.split('\n').length > MAX_LINES)
      .map((f) => `${f.rel}: ${f.text.split('\n').length} lines`);
    expect(long).to.deep.equal([]);
  });
});
