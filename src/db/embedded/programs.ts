// Running the PostgreSQL programs (initdb, postgres) as the user the server runs as, with failures
// that say what happened: a program that cannot be executed, or one that exited with its own words.
import { type ExecFileException, execFile } from 'node:child_process';

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
      if (err) reject(programFailure(file, args, runAs, err, stderr.trim() ? stderr : stdout));
      else resolve(stdout);
    });
  });
}

/** Why a program did not run to a good end: it could not be executed, or it said why it failed. */
function programFailure(
  file: string,
  args: string[],
  runAs: RunAs | undefined,
  err: ExecFileException,
  output: string,
): EmbeddedPgError {
  const code = err.code;
  if (code === 'EACCES' || code === 'ENOENT') {
    return new EmbeddedPgError(`${runAs ? 'the postgres user' : 'this user'} cannot execute ${file} (${code})`);
  }
  const name = file.split('/').pop();
  const said = lastLines(output);
  const how = err.killed ? 'timed out' : `exit ${String(code)}`;
  return new EmbeddedPgError(`${name} ${args[0] ?? ''} failed (${how})${said ? `: ${said}` : ''}`);
}
