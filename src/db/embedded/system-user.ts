// PostgreSQL refuses to run as root: as root, the embedded server runs as a `postgres` system user,
// created when the machine has none (a bare container).
import { execFile } from 'node:child_process';
import { EmbeddedPgError, lastLines, type RunAs } from './programs.js';

const USER = 'postgres';

function command(file: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, (err, stdout, stderr) =>
      resolve({ ok: !err, out: err ? `${stderr || err.message}` : stdout.trim() }),
    );
  });
}

async function lookUp(): Promise<RunAs | undefined> {
  const [uid, gid] = await Promise.all([command('id', ['-u', USER]), command('id', ['-g', USER])]);
  return uid.ok && gid.ok ? { uid: Number(uid.out), gid: Number(gid.out) } : undefined;
}

/** The user the server runs as: none unless this process is root, then `postgres` (made if missing). */
export async function serverUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const found = await lookUp();
  if (found) return found;
  // Several processes may start at once (parallel test workers): whoever loses the race finds the user made.
  await command('groupadd', ['--system', USER]);
  const made = await command('useradd', [
    '--system',
    '--gid',
    USER,
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    USER,
  ]);
  const ids = await lookUp();
  if (ids) return ids;
  throw new EmbeddedPgError(
    `PostgreSQL refuses to run as root, and there is no \`${USER}\` user to run it as; creating one failed (${lastLines(made.out, 1)})`,
    `Create it (useradd --system ${USER}) or start the service as another user`,
  );
}
