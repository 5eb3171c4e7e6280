// An executor that does what docs/protocol.md asks of one that survives drops and restarts: it keeps
// its session id, reconnects when its socket goes (to the address `next()` gives: another process
// after a 4503), resumes with hello.resumeSessionId, and performs each step once: a step.exec for a
// (runId, stepIndex) it already performed is answered with the same result again.
import WebSocket from 'ws';

let counter = 0;
const msgId = () => `msg_resuming${++counter}`;

export interface ResumingExecutorOptions {
  key: string;
  /** The address to connect to, asked again before every reconnect. */
  url: () => string;
  maxParallel?: number;
  /** Time a step takes, on average (each takes 0.5 to 1.5 times it, so runs do not move in lockstep). */
  stepMs?: number;
}

export class ResumingExecutor {
  sessionId?: string;
  /** Each step performed, by `${runId}:${stepIndex}`: how many times it was performed (must be 1). */
  readonly performed = new Map<string, number>();
  readonly finished = new Map<string, { status: string; passed: number; failed: number }>();
  /** Close codes of the sockets that went, in order. */
  readonly closes: number[] = [];
  readonly resumes: boolean[] = [];
  private readonly results = new Map<string, unknown>();
  private readonly inProgress = new Set<string>();
  private ws?: WebSocket;
  private stopped = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly options: ResumingExecutorOptions) {}

  /** Connects and says hello (resuming when it has a session); resolves on welcome. */
  async connect(): Promise<void> {
    const ws = new WebSocket(this.options.url(), { headers: { authorization: `Bearer ${this.options.key}` } });
    this.ws = ws;
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const welcomed = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(data.toString());
        if (frame.type === 'welcome') {
          this.sessionId = frame.payload.sessionId;
          this.resumes.push(frame.payload.resumed === true);
          resolve();
        } else if (
          frame.type === 'error' &&
          frame.payload.code === 'E_UNEXPECTED' &&
          frame.payload.message.includes('cannot be resumed')
        ) {
          // Its runs are gone (they ended as error): a new session next time.
          this.sessionId = undefined;
          this.ws = undefined; // the reconnect loop that made this attempt tries again
          ws.close();
          reject(new Error(frame.payload.message));
        } else {
          this.handle(frame);
        }
      });
    });
    ws.on('close', (code) => {
      this.closes.push(code);
      if (this.ws === ws && !this.stopped) void this.reconnect();
    });
    this.send('hello', {
      executor: 'runner',
      name: 'resuming-executor',
      capabilities: { maxParallel: this.options.maxParallel ?? 1 },
      ...(this.sessionId ? { resumeSessionId: this.sessionId } : {}),
    });
    await welcomed;
  }

  private async reconnect(): Promise<void> {
    for (let attempt = 0; attempt < 100 && !this.stopped; attempt += 1) {
      try {
        return await this.connect();
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private handle(frame: { type: string; id: string; runId?: string; payload?: any }): void {
    if (frame.type === 'ping') return this.send('pong', undefined, { ref: frame.id });
    if (frame.type === 'run.start' || frame.type === 'run.cancel')
      return this.send('ack', undefined, { runId: frame.runId, ref: frame.id });
    if (frame.type === 'run.finished') {
      this.finished.set(frame.runId!, frame.payload);
      for (const wake of this.waiters.splice(0)) wake();
      return;
    }
    if (frame.type !== 'step.exec') return;
    const key = `${frame.runId}:${frame.payload.stepIndex}`;
    const known = this.results.get(key);
    if (known) return this.send('step.result', known, { runId: frame.runId, ref: frame.id });
    // Still performing it (sent again on a resume): its result goes out when it is done.
    if (this.inProgress.has(key)) return;
    this.inProgress.add(key);
    this.performed.set(key, (this.performed.get(key) ?? 0) + 1);
    const ms = Math.round((this.options.stepMs ?? 0) * (0.5 + Math.random()));
    const result = { stepIndex: frame.payload.stepIndex, status: 'pass', durationMs: ms };
    setTimeout(() => {
      this.results.set(key, result);
      this.inProgress.delete(key);
      this.send('step.result', result, { runId: frame.runId, ref: frame.id });
    }, ms);
  }

  private send(type: string, payload?: unknown, fields: Record<string, unknown> = {}): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return; // lost with the socket; the resume sends the step again
    const frame = {
      otp: '1.0',
      id: msgId(),
      ts: new Date().toISOString(),
      type,
      ...(this.sessionId && type !== 'hello' ? { sessionId: this.sessionId } : {}),
      ...fields,
      ...(payload === undefined ? {} : { payload }),
    };
    this.ws.send(JSON.stringify(frame));
  }

  /** Resolves once `count` runs have finished on this executor, or rejects after `timeoutMs`. */
  async finishedCount(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.finished.size < count) {
      if (Date.now() > deadline) throw new Error(`${this.finished.size} of ${count} runs finished`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 250).unref();
      });
    }
  }

  close(): void {
    this.stopped = true;
    this.ws?.close();
  }
}
