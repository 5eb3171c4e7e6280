// Running the PostgreSQL programs (initdb, postgres) as the user the server runs as, with failures
// that say what happened: a program that cannot be executed, or one that exited with its own words.
import { execFile } from 'node:child_process';

/** As root, the `postgres` system user's ids (PostgreSQL refuses to run as root); otherwise none. */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * Why the embedded server cannot start, and what the person running it can do about it. The
 * message says both; startEmbeddedPostgres adds the way out that always exists (DATABASE_URL).
 */
export class EmbeddedPgError extends Error {
  constructor(
    readonly reason: string,
    readonly hint?: string,
  ) {
    super(hint ? `${reason}. ${hint}` : reason);
  }
}

/** The last lines of a program's own output: what it said before it gave up. */
export function lastLines(text: string, count = 3): string {
  return text.trim().split('\n').slice(-count).join(' / ');
}

/**
 * Runs `file` to its end as `runAs` (from `/`: the service's working directory may be closed to that
 * user) and answers its stdout. Rejects with an EmbeddedPgError naming the program and what it said.
 */
export function runProgram(
  file: string,
  args: string[],
  runAs: RunAs | undefined,
  timeoutMs = 60_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...runAs, cwd: '/', timeout: timeoutMs }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const name = file.split('/').pop();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'ENOENT') {
        return reject(
          new EmbeddedPgError(`${runAs ? 'the postgres user' : 'this user'} cannot execute ${file} (${code})`),
        );
      }
      const said = lastLines(stderr.trim() ? stderr : stdout);
      reject(
        new EmbeddedPgError(
          `${name} ${args[0] ?? ''} failed (${err.killed ? 'timed out' : `exit ${String(code)}`})${said ? `: ${said}` : ''}`,
        ),
      );
    });
  });
}
