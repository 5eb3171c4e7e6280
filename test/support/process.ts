// Runs the service as `npm start` does, in a child process, and reads where it listens from its log.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceProcess {
  child: ChildProcess;
  restUrl: string;
  wsUrl: string;
  stdout(): string;
  stderr(): string;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function spawnService(
  env: Record<string, string | undefined>,
  timeoutMs = 30_000,
): Promise<ServiceProcess> {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...process.env,
    PORT: '0',
    WS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...env,
  })) {
    if (v !== undefined) childEnv[k] = v;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<{ rest: string; otp: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in ${timeoutMs} ms:\n${err}`)), timeoutMs);
    child.stderr!.on('data', (d) => {
      err += d;
      for (const line of err.split('\n')) {
        if (!line.includes('"service ready"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line));
        return;
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it was ready:\n${err}`));
    });
  });
  return {
    child,
    restUrl: ready.rest.replace(/\/api\/v1$/, ''),
    wsUrl: ready.otp.replace(/\/otp$/, ''),
    stdout: () => out,
    stderr: () => err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
