// The harness side of the executor workers: forks them (through tsx), sends each a command and
// gathers the answers; keeps the latest counters each worker pushed for the progress line.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ROOT } from './procs.js';
import type { Collected, Command, Counters, WorkerMessage } from './protocol.js';

const WORKER = fileURLToPath(new URL('./executor-worker.ts', import.meta.url));

export class Fleet {
  private seq = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly ticks: Counters[] = [];

  private constructor(private readonly workers: ChildProcess[]) {
    workers.forEach((worker, i) => {
      worker.on('message', (message: WorkerMessage) => {
        if ('tick' in message) {
          this.ticks[i] = message.tick;
          return;
        }
        const waiter = this.pending.get(message.seq);
        if (!waiter) return;
        this.pending.delete(message.seq);
        if (message.ok) waiter.resolve(message.result);
        else waiter.reject(new Error(`worker ${i}: ${message.error}`));
      });
      worker.on('exit', (code) => {
        for (const [seq, waiter] of this.pending) {
          waiter.reject(new Error(`worker ${i} exited (${code})`));
          this.pending.delete(seq);
        }
      });
    });
  }

  /** Forks `count` workers and waits until each has said it is alive. */
  static async start(count: number): Promise<Fleet> {
    const workers = Array.from({ length: count }, () =>
      fork(WORKER, [], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            w.once('message', () => resolve());
            w.once('exit', (code) => reject(new Error(`executor worker exited at start (${code})`)));
          }),
      ),
    );
    return new Fleet(workers);
  }

  get pids(): number[] {
    return this.workers.map((w) => w.pid!);
  }

  get size(): number {
    return this.workers.length;
  }

  send<T = unknown>(index: number, cmd: Command): Promise<T> {
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      this.workers[index]!.send({ ...cmd, seq });
    });
  }

  /** The same command (or one made per worker) to every worker. */
  all<T = unknown>(cmd: Command | ((index: number) => Command)): Promise<T[]> {
    return Promise.all(this.workers.map((_, i) => this.send<T>(i, typeof cmd === 'function' ? cmd(i) : cmd)));
  }

  collect(): Promise<Collected[]> {
    return this.all<Collected>({ op: 'collect' });
  }

  /** The sum of the latest counters every worker pushed. */
  totals(): Counters {
    const sum: Counters = {
      connected: 0,
      roundTrips: 0,
      resultsSent: 0,
      runsStarted: 0,
      runsFinished: 0,
      posts: 0,
      postFailures: 0,
      pings: 0,
      errorFrames: 0,
      resumed: 0,
      resultsResent: 0,
      performedTwice: 0,
    };
    for (const t of this.ticks) if (t) for (const k of Object.keys(sum) as Array<keyof Counters>) sum[k] += t[k];
    return sum;
  }

  /** Closes every socket, then ends the workers. */
  async stop(): Promise<void> {
    await Promise.race([this.all({ op: 'close' }).catch(() => {}), new Promise((r) => setTimeout(r, 5000))]);
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.exitCode !== null || w.signalCode !== null) return resolve();
            w.once('exit', () => resolve());
            if (w.connected) w.disconnect();
            setTimeout(() => w.kill('SIGKILL'), 3000).unref();
          }),
      ),
    );
  }
}

/** Splits `total` into `parts` near-equal shares. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/**
 * Connects `sessions` idle executor sessions (hello, welcome, pings answered), shared across the
 * fleet's workers, 64 handshakes at once per worker; answers how many were welcomed.
 */
export async function connectIdle(fleet: Fleet, url: string, key: string, sessions: number): Promise<number> {
  const parts = shares(sessions, fleet.size);
  const results = await fleet.all<{ ok: number; failed: number }>((i) => ({
    op: 'otp-connect',
    url,
    key,
    count: parts[i]!,
    concurrency: 64,
    maxParallel: 1,
  }));
  return results.reduce((n, r) => n + r.ok, 0);
}
