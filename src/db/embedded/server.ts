// The embedded server's process: started in a session and process group of its own (detached), since
// Ctrl-C in a terminal signals the whole foreground group and PostgreSQL must not stop before the
// service has finished its runs. The service stops it last (service.ts), with SIGINT (fast shutdown).
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedPgError, lastLines, type RunAs } from './programs.js';

export interface ServerOptions {
  postgres: string;
  databaseDir: string;
  port: number;
  flags: string[];
  logFile: string;
  password: string;
  runAs: RunAs | undefined;
}

const READY_TIMEOUT_MS = 30_000;

export async function startServer(options: ServerOptions): Promise<ChildProcess> {
  const { runAs } = options;
  await stopLeftover(options.databaseDir);
  const logStart = await fs.stat(options.logFile).then(
    (s) => s.size,
    () => 0,
  );
  const log = openSync(options.logFile, 'a');
  if (runAs) await fs.chown(options.logFile, runAs.uid, runAs.gid);
  // detached: a session and process group of its own, out of reach of the terminal's Ctrl-C.
  const child = spawn(options.postgres, ['-D', options.databaseDir, '-p', String(options.port), ...options.flags], {
    ...runAs,
    cwd: '/',
    detached: true,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`PostgreSQL exited (${signal ?? `code ${code}`})`)));
  });
  exited.catch(() => {});
  // Ready when it takes a connection.
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    // A bounded connect: whatever holds the port when PostgreSQL could not take it may never answer.
    const client = new pg.Client({
      host: '127.0.0.1',
      port: options.port,
      user: 'otp',
      password: options.password,
      database: 'postgres',
      connectionTimeoutMillis: 2_000,
    });
    try {
      await Promise.race([client.connect(), exited]);
      await client.end();
      // A crash (an exception nobody caught) still takes the server down.
      const onExit = () => {
        if (child.exitCode === null) child.kill('SIGINT');
      };
      process.once('exit', onExit);
      child.once('exit', () => process.removeListener('exit', onExit));
      return child;
    } catch (err) {
      // Not awaited: ending a connection the other side never answered waits for that side.
      client.end().catch(() => {});
      // Gone: it exited, or it never started (spawn failed: no pid).
      const gone = child.exitCode !== null || child.signalCode !== null || child.pid === undefined;
      if (gone || Date.now() > deadline) {
        if (!gone) child.kill('SIGKILL');
        throw await failure(err as Error, options, logStart, gone);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Why the server did not come up, in its own words (the FATAL lines it logged), and what to do. */
async function failure(
  err: Error,
  options: ServerOptions,
  logStart: number,
  exited: boolean,
): Promise<EmbeddedPgError> {
  const text = await fs.readFile(options.logFile, 'utf8').then(
    (t) => t.slice(logStart),
    () => '',
  );
  // Its complaints, without the time and pid each line starts with.
  const lines = text.split('\n').map((line) => line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[\d+\] /, ''));
  const complaints = lines.filter((line) => /^(FATAL|PANIC|ERROR):|^LOG: .*could not/.test(line));
  const said = lastLines((complaints.length ? complaints : lines).join('\n'), 3).replace(/\s+/g, ' ');
  const why = exited ? err.message : `PostgreSQL took no connection within ${READY_TIMEOUT_MS / 1000} s`;
  const reason = `${why}${said ? `: ${said}` : ''} (log: ${options.logFile})`;
  if (/already in use/.test(text)) {
    return new EmbeddedPgError(
      reason,
      `Port ${options.port} is taken: set EMBEDDED_PG_PORT to a free port, or leave it unset to use any free one`,
    );
  }
  return new EmbeddedPgError(reason);
}

/**
 * A server of this data directory left running by a service that was killed (SIGKILL runs no
 * handler) holds its lock file: stop it (fast shutdown) so this start can go on.
 */
async function stopLeftover(databaseDir: string): Promise<void> {
  const pid = Number(
    (await fs.readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0],
  );
  if (!pid) return;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes('postgres') || !cmdline.includes(databaseDir)) return;
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 15_000;
  while (
    Date.now() < deadline &&
    (await fs.stat(`/proc/${pid}`).then(
      () => true,
      () => false,
    ))
  )
    await new Promise((r) => setTimeout(r, 50));
}

/** SIGINT is PostgreSQL's fast shutdown: sessions end, the data is flushed, the server exits. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  await exited;
}
