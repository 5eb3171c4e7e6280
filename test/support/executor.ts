// A real WebSocket client speaking OTP, as a hand-written executor would.
import WebSocket from 'ws';
import { validateOutbound } from '../../src/otp/protocol/validators.js';

export interface Frame {
  otp: string;
  id: string;
  ts: string;
  type: string;
  sessionId?: string;
  runId?: string;
  ref?: string;
  payload?: any;
}

let counter = 0;
export const msgId = () => `msg_test${++counter}`;

export class TestExecutor {
  readonly frames: Frame[] = [];
  /** Frames from the service that break the documented outbound schemas (there must be none). */
  readonly violations: string[] = [];
  sessionId?: string;
  readonly closed: Promise<{ code: number; reason: string }>;
  private closeInfo = 'open';
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      const check = validateOutbound(frame);
      if (!check.ok) this.violations.push(`${frame.type}: ${JSON.stringify(check.errors)}`);
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeInfo = `closed with ${code} ${reason.toString()}`;
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  static connect(url: string, auth: { key?: string; via?: 'header' | 'query' } = {}): Promise<TestExecutor> {
    const target = auth.key && auth.via === 'query' ? `${url}?token=${encodeURIComponent(auth.key)}` : url;
    const headers: Record<string, string> =
      auth.key && auth.via !== 'query' ? { authorization: `Bearer ${auth.key}` } : {};
    const ws = new WebSocket(target, { headers });
    const executor = new TestExecutor(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(executor));
      ws.once('error', reject);
    });
  }

  /** Sends a frame with the envelope filled in; answers its id. */
  send(type: string, payload?: unknown, fields: Partial<Frame> = {}): string {
    const id = msgId();
    const frame = {
      otp: '1.0',
      id,
      ts: new Date().toISOString(),
      type,
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
      ...fields,
      ...(payload === undefined ? {} : { payload }),
    };
    this.ws.send(JSON.stringify(frame));
    return id;
  }

  raw(text: string | Buffer): void {
    this.ws.send(text);
  }

  /** The next frame (after those already taken) matching type and the predicate. */
  next(type: string, predicate: (f: Frame) => boolean = () => true, timeoutMs = 5000): Promise<Frame> {
    if (this.violations.length)
      return Promise.reject(new Error(`service sent frames outside the schema: ${this.violations.join('; ')}`));
    const match = (f: Frame) => f.type === type && predicate(f);
    for (let i = 0; i < this.frames.length; i++) {
      if (match(this.frames[i])) {
        const frame = this.frames[i];
        this.frames.splice(i, 1);
        return Promise.resolve(frame);
      }
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no ${type} frame within ${timeoutMs} ms (socket ${this.closeInfo}); got: ${this.frames.map((f) => f.type).join(', ')}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({
        match,
        resolve: (f) => {
          clearTimeout(timer);
          this.frames.splice(this.frames.indexOf(f), 1);
          resolve(f);
        },
      });
    });
  }

  async hello(capabilities: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<Frame> {
    const id = this.send('hello', {
      executor: 'runner',
      name: 'test-executor',
      version: '0.0.1',
      capabilities,
      ...extra,
    });
    const welcome = await this.next('welcome');
    if (welcome.ref !== id) throw new Error('welcome does not ref the hello');
    this.sessionId = welcome.payload.sessionId;
    return welcome;
  }

  /** Answers a step.exec with a result. */
  result(exec: Frame, status: 'pass' | 'fail' | 'skip' | 'error', extra: Record<string, unknown> = {}): string {
    return this.send(
      'step.result',
      { stepIndex: exec.payload.stepIndex, status, durationMs: 5, ...extra },
      { runId: exec.runId, ref: exec.id },
    );
  }

  close(): void {
    this.ws.close();
  }

  terminate(): void {
    this.ws.terminate();
  }
}
