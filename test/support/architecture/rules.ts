// The rules of docs/architecture.md as functions over source files (sources.ts): each answers the
// offences it finds, one line each, and an empty list when the files keep the rule.
import path from 'node:path';
import {
  AJV_MAKER,
  ENV_READERS,
  KERNEL,
  KNOWN_FILE_CIRCLES,
  MACHINE_PACKAGES,
  MAX_LINES,
  MAY_IMPORT,
  NO_KERNEL,
  ROOT_DIRS,
  ROOT_FILES,
  ROOT_NEVER_IMPORTS,
  TABLE_OWNERS,
} from './layout.js';
import type { Import, Source } from './sources.js';

/** The room of a path from the repository root: `otp/store`, `kernel`, `root`, `db`, ... */
export function roomOf(rel: string): string {
  const parts = rel.split('/');
  if (parts[0] === 'machines') return 'machines';
  if (parts[0] === 'db') return 'db'; // migrations belong to the db room
  // The browser extension's code; its build tooling (extension/build/) runs in Node and is no room.
  if (parts[0] === 'extension') return parts[1] === 'src' ? 'extension' : 'outside';
  if (parts[0] !== 'src') return 'outside';
  if (parts.length === 2) {
    const file = parts[1]!.replace(/\.js$/, '.ts');
    return KERNEL.has(file) ? 'kernel' : ROOT_FILES.has(file) ? 'root' : `unknown:${parts[1]}`;
  }
  if (ROOT_DIRS.has(parts[1]!)) return 'root';
  if (parts[1] === 'otp') return `otp/${parts[2]}`;
  return parts[1]!;
}

const isRelative = (specifier: string) => specifier.startsWith('./') || specifier.startsWith('../');

/** The path an import names, from the repository root. */
function target(source: Source, specifier: string): string {
  return path.posix.normalize(path.posix.join(path.posix.dirname(source.rel), specifier));
}

function roomImports(source: Source): Array<{ imp: Import; room: string }> {
  return source.imports
    .filter((imp) => imp.specifier !== undefined && isRelative(imp.specifier) && !imp.glob)
    .map((imp) => ({ imp, room: roomOf(target(source, imp.specifier!)) }));
}

const flat = (text: string) => text.replace(/\s+/g, ' ');

export function unknownRooms(files: Source[]): string[] {
  return files
    .filter((f) => f.rel.startsWith('src/') && !(roomOf(f.rel) in MAY_IMPORT) && roomOf(f.rel) !== 'root')
    .map((f) => `${f.rel}: in no room`);
}

/** Why `imp` of a file of `room` breaks the table, or undefined. */
function importOffence(source: Source, room: string, imp: Import): string | undefined {
  const spec = imp.specifier;
  if (spec === undefined || (imp.glob && (isRelative(spec) || room === 'machines')))
    return `import() of a computed module cannot be checked`;
  if (!isRelative(spec))
    return room === 'machines' && !MACHINE_PACKAGES.has(spec)
      ? `machines/ imports only ${[...MACHINE_PACKAGES].join(', ')}`
      : undefined;
  const to = roomOf(target(source, spec));
  if (to === room) return undefined;
  // The machines are pure: nothing of src/ (not even the kernel), of db/ or of anywhere else.
  if (room === 'machines') return `machines/ imports only its own files and ${[...MACHINE_PACKAGES].join(', ')}`;
  if (to === 'kernel') return NO_KERNEL.has(room) ? `${room} may not import the kernel` : undefined;
  if (room === 'root') return ROOT_NEVER_IMPORTS.has(to) ? `the composition root may not import ${to}` : undefined;
  const allowed = (MAY_IMPORT[room] ?? []).find((entry) => entry === to || entry === `${to}:types`);
  if (!allowed) return `${room} may not import ${to}`;
  if (allowed.endsWith(':types') && !imp.typeOnly) return `${room} may import only types of ${to} (import type)`;
  return undefined;
}

/** Static, dynamic, bare and type-only imports, of .ts and .js files alike, go where the table allows. */
export function importOffences(files: Source[]): string[] {
  const offences: string[] = [];
  for (const source of files) {
    const room = roomOf(source.rel);
    if (room === 'outside') continue;
    for (const imp of source.imports) {
      const why = importOffence(source, room, imp);
      if (why) offences.push(`${source.rel}: ${flat(imp.text)} (${why})`);
    }
  }
  return offences;
}

/** The strongly connected components of more than one node, or of one that points at itself (Tarjan). */
function circles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || edges.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

function addEdge(edges: Map<string, Set<string>>, from: string, to: string): void {
  edges.set(from, (edges.get(from) ?? new Set()).add(to));
}

/** No circle of imports between rooms (type-only imports count: they tie the rooms as much). */
export function roomCycles(files: Source[]): string[] {
  const edges = new Map<string, Set<string>>();
  for (const source of files) {
    const room = roomOf(source.rel);
    for (const { room: to } of roomImports(source)) if (to !== room) addEdge(edges, room, to);
  }
  return circles(edges).map((rooms) => `rooms in a circle: ${rooms.join(', ')}`);
}

/** The source file an import names (`x.js` is `x.ts` when that is the source). */
function fileOf(known: Set<string>, rel: string): string | undefined {
  return [rel, rel.replace(/\.js$/, '.ts'), rel.replace(/\.mjs$/, '.mts'), rel.replace(/\.cjs$/, '.cts')].find((c) =>
    known.has(c),
  );
}

/** No circle of imports between files, type-only imports included, but the known ones (layout.ts). */
export function fileCircles(files: Source[], known: string[][] = KNOWN_FILE_CIRCLES): string[] {
  const rels = new Set(files.map((f) => f.rel));
  const edges = new Map<string, Set<string>>();
  for (const source of files) {
    for (const imp of source.imports) {
      if (imp.specifier === undefined || !isRelative(imp.specifier) || imp.glob) continue;
      const to = fileOf(rels, target(source, imp.specifier));
      if (to) addEdge(edges, source.rel, to);
    }
  }
  const key = (members: string[]) => [...members].sort().join(' <-> ');
  const expected = new Set(known.map(key));
  const seen = circles(edges).map(key);
  return [
    ...seen.filter((c) => !expected.has(c)).map((c) => `files in a circle: ${c}`),
    ...[...expected]
      .filter((c) => !seen.includes(c))
      .map((c) => `a known circle is gone, remove it from KNOWN_FILE_CIRCLES: ${c}`),
  ];
}

const CREATES = [
  /\bcreateTable(?:IfNotExists)?\(\s*(["'`])([\w$]+)\1/g,
  /\bcreate\s+(?:(?:global\s+|local\s+)?(?:temporary|temp|unlogged)\s+)?table\s+(?:if\s+not\s+exists\s+)?(?:"?public"?\.)?"?([\w$]+)/gi,
  /\bcreate\s+(?:or\s+replace\s+)?(?:materialized\s+)?view\s+(?:if\s+not\s+exists\s+)?(?:"?public"?\.)?"?([\w$]+)/gi,
];

/** Every table (or view) the migrations create, with the migrations that create it. */
export function createdTables(files: Source[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const source of files.filter((f) => f.rel.startsWith('db/migrations/'))) {
    for (const pattern of CREATES) {
      for (const match of source.code.matchAll(pattern)) {
        const table = match[match.length - 1]!.toLowerCase();
        out.set(table, [...new Set([...(out.get(table) ?? []), source.rel])]);
      }
    }
  }
  return out;
}

/** Every table a migration creates has an owner, and every owner's table is created by a migration. */
export function unownedTables(files: Source[], owners: Record<string, string> = TABLE_OWNERS): string[] {
  const created = createdTables(files);
  return [
    ...[...created]
      .filter(([table]) => !(table in owners))
      .map(([table, where]) => `${table} (created in ${where.join(', ')}) has no owner`),
    ...Object.keys(owners)
      .filter((table) => !created.has(table))
      .map((table) => `${table} has an owner but no migration creates it`),
  ];
}

/** Whether code names `table`: after an SQL keyword (any case), or as the first argument of a call. */
export function namesTable(code: string, table: string): boolean {
  const sql = new RegExp(
    String.raw`\b(?:from|join|into|update|table|references|truncate|using|on)\s+(?:only\s+)?(?:if\s+(?:not\s+)?exists\s+)?(?:"?public"?\.)?"?${table}"?(?![\w$])`,
    'i',
  );
  const call = new RegExp(String.raw`\(\s*(["'\`])${table}(?:\s+as\s+[\w$]+)?\1\s*[,)]`, 'i');
  return sql.test(code) || call.test(code);
}

/** Only a table's owner names it in code; the migrations (db/) aside. */
export function tableOffences(files: Source[], owners: Record<string, string> = TABLE_OWNERS): string[] {
  const offences: string[] = [];
  for (const source of files) {
    if (source.rel.startsWith('db/')) continue;
    const room = roomOf(source.rel);
    for (const [table, owner] of Object.entries(owners)) {
      if (room !== owner && namesTable(source.code, table))
        offences.push(`${source.rel} names ${table} (owned by ${owner})`);
    }
  }
  return offences;
}

const ENV_READS = [
  /\bprocess\s*(?:\?\.)?\s*\.\s*env\b/,
  /\bprocess\s*(?:\?\.)?\s*\[\s*(["'`])env\1\s*\]/,
  /\{[^{}]*\benv\b[^{}]*\}\s*=\s*(?:globalThis\s*\.\s*)?process\b/,
];

/** process.env is read only by ENV_READERS: `process.env`, `process["env"]`, `{ env } = process`, `import { env } from 'node:process'`. */
export function envReaders(files: Source[]): string[] {
  return files
    .filter((f) => !ENV_READERS.has(f.rel))
    .filter(
      (f) =>
        ENV_READS.some((pattern) => pattern.test(f.code)) ||
        f.imports.some((i) => (i.specifier === 'process' || i.specifier === 'node:process') && /\benv\b/.test(i.text)),
    )
    .map((f) => `${f.rel} reads process.env`);
}

/** Lines of a text; a last line break ends the last line rather than starting another. */
export function lineCount(text: string): number {
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export function longFiles(files: Source[]): string[] {
  return files
    .filter((f) => lineCount(f.text) > MAX_LINES)
    .map((f) => `${f.rel}: ${lineCount(f.text)} lines (at most ${MAX_LINES})`);
}

/** Only AJV_MAKER imports ajv or ajv-formats other than for types. */
export function ajvMakers(files: Source[]): string[] {
  return files.flatMap((f) =>
    f.rel === AJV_MAKER
      ? []
      : f.imports
          .filter((i) => !i.typeOnly && /^ajv(-formats)?(\/|$)/.test(i.specifier ?? ''))
          .map((i) => `${f.rel}: ${flat(i.text)} (only ${AJV_MAKER} makes Ajv instances)`),
  );
}
