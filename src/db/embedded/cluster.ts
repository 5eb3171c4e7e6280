// The embedded server's cluster: where its data directory is, and creating it (initdb).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PgPrograms } from './binaries.js';
import { type RunAs, runProgram } from './programs.js';

/**
 * DATA_DIR/pg, unless the server runs as the postgres user (as root) and that user cannot reach it:
 * DATA_DIR itself is opened for traversal, but if an ancestor is closed (a home directory of mode
 * 0700, say) the cluster lives under `stateDir` instead, in a directory named by DATA_DIR.
 */
export async function clusterDir(dataDir: string, runAs: RunAs | undefined, stateDir: string): Promise<string> {
  const inside = path.join(dataDir, 'pg');
  if (!runAs) return inside;
  const mode = (await fs.stat(dataDir)).mode;
  await fs.chmod(dataDir, (mode & 0o7777) | 0o711);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if (((await fs.stat(dir)).mode & 0o001) === 0) {
      const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
      await fs.mkdir(stateDir, { recursive: true, mode: 0o711 });
      return path.join(stateDir, `pg-${id}`);
    }
    if (dir === path.dirname(dir)) return inside;
  }
}

/**
 * A new cluster in `databaseDir` (whatever was there is removed): superuser `otp` with `password`
 * (SCRAM), UTF-8 with the builtin C.UTF-8 locale (the same on every machine, whatever locales it has
 * installed), messages in English.
 */
export async function initCluster(
  programs: PgPrograms,
  databaseDir: string,
  runAs: RunAs | undefined,
  password: string,
): Promise<void> {
  await fs.rm(databaseDir, { recursive: true, force: true });
  await fs.mkdir(databaseDir, { recursive: true, mode: 0o700 });
  if (runAs) await fs.chown(databaseDir, runAs.uid, runAs.gid);
  // initdb reads the password from a file; beside the cluster, where its user can read it, for a moment.
  const pwFile = path.join(
    path.dirname(databaseDir),
    `.${path.basename(databaseDir)}-pw-${randomBytes(6).toString('hex')}`,
  );
  await fs.writeFile(pwFile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs) await fs.chown(pwFile, runAs.uid, runAs.gid);
    await runProgram(
      programs.initdb,
      [
        `--pgdata=${databaseDir}`,
        '--username=otp',
        `--pwfile=${pwFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--no-instructions',
      ],
      runAs,
    );
  } finally {
    await fs.rm(pwFile, { force: true });
  }
}
