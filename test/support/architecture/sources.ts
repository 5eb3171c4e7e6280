// The source files the architecture test reads, as data: a file's path, its text, its imports as a
// module lexer reads them and its code without comments. Rules (rules.ts) are functions over a list
// of these, so the same rules run over the real tree and over a tree with a planted violation.
import fs from 'node:fs';
import path from 'node:path';
import { init, parse } from 'es-module-lexer';
import { transformSync } from 'esbuild';

export interface Import {
  /** The module named; undefined when import() is given an expression. */
  specifier: string | undefined;
  kind: 'static' | 'dynamic';
  /** `import type` / `export type` (a type-only import, erased from the JavaScript). */
  typeOnly: boolean;
  /** import() of a template with substitutions: `specifier` has a `*` for each. */
  glob: boolean;
  /** The statement or expression, for messages. */
  text: string;
}

export interface Source {
  /** Path from the repository root, with `/`. */
  rel: string;
  text: string;
  imports: Import[];
  /** The code as JavaScript without comments (esbuild): what runs, so a comment never offends. */
  code: string;
}

/** The directories whose files are in rooms, and the files read there. */
export const ROOTS = ['src', 'machines', 'db', 'extension/src'];
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Loads the lexer's WebAssembly; call once before sourceOf. */
export async function ready(): Promise<void> {
  await init();
}

/** One file, read as the rules read it. `rel` decides how: TypeScript for .ts, JavaScript otherwise. */
export function sourceOf(rel: string, text: string): Source {
  // es-module-lexer reads TypeScript's type-only imports too (typeOnly), which a transform would erase.
  const [found] = parse(text, rel);
  const imports: Import[] = [];
  for (const i of found) {
    if (i.type === 'import-meta') continue;
    imports.push({
      specifier: i.specifier ?? undefined,
      kind: i.type === 'dynamic' ? 'dynamic' : 'static',
      typeOnly: i.type !== 'dynamic' && i.typeOnly,
      glob: i.type === 'dynamic' && i.glob,
      text: text.slice(i.importStart, i.importEnd),
    });
  }
  const loader = /\.[mc]?ts$/.test(rel) ? 'ts' : 'js';
  const { code } = transformSync(text, { loader, legalComments: 'none', sourcefile: rel });
  return { rel, text, imports, code };
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full);
    return SOURCE_FILE.test(entry.name) ? [full] : [];
  });
}

/** Every source file under ROOTS of the repository at `root`. */
export function readTree(root: string): Source[] {
  return ROOTS.flatMap((dir) => walk(path.join(root, dir))).map((file) =>
    sourceOf(path.relative(root, file).split(path.sep).join('/'), fs.readFileSync(file, 'utf8')),
  );
}
