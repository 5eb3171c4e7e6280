// The runner's OTP connection: hello/welcome, pong, and the frames of its runs, handled strictly in
// the order they arrive (frames are dispatched synchronously; each run queues its own work, see
// run.ts). When the socket drops it reconnects with exponential backoff and full jitter and resumes
// its session (hello.resumeSessionId): the runs in flight go on, each step performed once. When the
// service cannot resume it (past its window), the old runs are dropped and the runner starts a new
// session. Credentials refused (4401, 4403) or another protocol version (4426) stop it instead.
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { buildFrame } from '../otp/protocol/frames.js';
import type {
  Capabilities,
  OutboundMessage,
  StepResultPayload,
  WelcomePayload,
} from '../otp/protocol/schemas/messages.js';
import { type RunDeps, RunExecutor } from './run.js';

/** A frame the service sends (the protocol's catalogue), narrowed by its type. */
export type InboundFrame = OutboundMessage;

export interface SessionOptions {
  server: string;
  key: string;
  hello: { executor: string; name: string; version: string; projectId?: string; capabilities: Capabilities };
  /** What each run needs (browser, REST, eval); sendResult and stepStarted are filled in here. */
  runDeps: Omit<RunDeps, 'sendResult' | 'stepStarted'>;
  log(line: string): void;
  /** A frame type the runner does not handle itself (record.start, record.stop); true when handled. */
  onFrame?(
    frame: InboundFrame,
    send: (type: string, fields: { runId?: string; ref?: string }, payload?: unknown) => void,
  ): boolean;
  /** Backoff bounds, in milliseconds. */
  backoff?: { baseMs: number; maxMs: number };
}

/** Closes after which reconnecting cannot help. */
const FATAL_CLOSES = new Map([
  [4401, 'the key was refused (missing, unknown or revoked)'],
  [4403, 'the key may not open sessions (scope write needed) or --project is not its project'],
  [4426, 'the service speaks another major protocol version'],
]);

/**
 * Events: 'welcome' (sessionId, payload), 'disconnect' (code, reason), 'step' (runId, stepIndex) when
 * a step begins, 'result' (runId, payload), 'finished' (runId, payload), 'fatal' (Error).
 */
export class OtpSession extends EventEmitter {
  sessionId?: string;
  apiUrl?: string;
  private ws?: WebSocket;
  private readonly runs = new Map<string, RunExecutor>();
  private attempt = 0;
  private keepalive = 25;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private livenessTimer?: NodeJS.Timeout;
  /** The session lost with the connection, to resume on the next one. */
  private resumeFrom?: string;
  /** A draining service said when to come back (`reconnect`): the wait after its 4503 close. */
  private comeBackAfterMs?: number;

  constructor(private readonly options: SessionOptions) {
    super();
  }

  get runCount(): number {
    return this.runs.size;
  }

  connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.options.server, { headers: { authorization: `Bearer ${this.options.key}` } });
    this.ws = ws;
    ws.on('open', () =>
      this.send(
        'hello',
        {},
        { ...this.options.hello, ...(this.resumeFrom ? { resumeSessionId: this.resumeFrom } : {}) },
      ),
    );
    ws.on('message', (data) => {
      let frame: InboundFrame;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return this.options.log('a frame that is not JSON was ignored');
      }
      this.alive();
      this.dispatch(frame);
    });
    ws.on('error', (err) => this.options.log(`connection: ${err.message}`));
    ws.on('close', (code, reason) => this.dropped(ws, code, reason.toString()));
  }

  send(type: string, fields: { runId?: string; ref?: string }, payload?: unknown): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    ws.send(buildFrame(type, { ...(this.sessionId ? { sessionId: this.sessionId } : {}), ...fields }, payload));
  }

  /** Closes the connection for good; the runs' contexts go with it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.livenessTimer);
    const ws = this.ws;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      const closed = new Promise((resolve) => ws.once('close', resolve));
      ws.close(1000, 'runner stopping');
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      ws.terminate();
    }
    await this.endRuns();
  }

  /** Test hook and last resort: cuts the socket without a close handshake, as a network failure would. */
  drop(): void {
    this.ws?.terminate();
  }

  private dispatch(frame: InboundFrame): void {
    switch (frame.type) {
      case 'welcome':
        return this.welcomed(frame.payload as WelcomePayload);
      case 'ping':
        return this.send('pong', { ref: frame.id });
      case 'run.start':
        return this.runStart(frame);
      case 'step.exec':
        return this.stepExec(frame);
      case 'run.cancel':
        return this.runCancel(frame);
      case 'run.finished':
        return this.runFinished(frame);
      case 'reconnect':
        this.comeBackAfterMs = Math.max(0, Number(frame.payload?.retryAfterMs) || 0);
        return;
      case 'error':
        if (this.resumeFrom && !this.sessionId && String(frame.payload?.message).includes('cannot be resumed'))
          return this.resumeRefused();
        return this.options.log(`service error ${frame.payload?.code}: ${frame.payload?.message}`);
      default:
        if (this.options.onFrame?.(frame, (t, fields, payload) => this.send(t, fields, payload))) return;
        this.options.log(`${frame.type} ignored`);
    }
  }

  private runStart(frame: Extract<InboundFrame, { type: 'run.start' }>): void {
    const { runId } = frame;
    if (!runId) return;
    this.send('ack', { runId, ref: frame.id });
    // Sent again by a process that took the session over: the run goes on where it was.
    if (this.runs.has(runId)) return;
    const run = new RunExecutor(runId, frame.payload, {
      ...this.options.runDeps,
      sendResult: (id, ref, payload) => this.result(id, ref, payload),
      stepStarted: (id, stepIndex) => this.emit('step', id, stepIndex),
    });
    this.runs.set(runId, run);
    this.options.log(`run ${runId}: started (${frame.payload.totalSteps} steps)`);
  }

  private stepExec(frame: Extract<InboundFrame, { type: 'step.exec' }>): void {
    const { runId } = frame;
    const run = runId ? this.runs.get(runId) : undefined;
    if (run) return run.enqueue(frame.id, frame.payload);
    this.send(
      'step.result',
      { runId, ref: frame.id },
      {
        stepIndex: frame.payload?.stepIndex ?? 0,
        status: 'error',
        durationMs: 0,
        error: { code: 'E_INTERNAL', message: 'step.exec for a run this runner did not start' },
      },
    );
  }

  private runCancel(frame: Extract<InboundFrame, { type: 'run.cancel' }>): void {
    const { runId } = frame;
    if (runId) this.send('ack', { runId, ref: frame.id });
    const run = runId ? this.runs.get(runId) : undefined;
    if (!run) return;
    this.options.log(`run ${runId}: cancelled`);
    void run.cancel();
  }

  private runFinished(frame: Extract<InboundFrame, { type: 'run.finished' }>): void {
    const { runId } = frame;
    const run = runId ? this.runs.get(runId) : undefined;
    if (runId) this.runs.delete(runId);
    const p = frame.payload;
    this.options.log(
      `run ${runId}: ${p.status} (passed ${p.passed}, failed ${p.failed}, skipped ${p.skipped} of ${p.total}) in ${p.durationMs} ms`,
    );
    void run?.finish();
    this.emit('finished', runId, p);
  }

  private welcomed(payload: WelcomePayload): void {
    this.attempt = 0;
    // A new session, not the one lost: its runs ended as error on the service; their contexts go.
    if (!payload.resumed) void this.endRuns();
    if (this.resumeFrom)
      this.options.log(
        payload.resumed ? `session ${payload.sessionId} resumed` : `session ${this.resumeFrom} could not be resumed`,
      );
    this.resumeFrom = undefined;
    this.sessionId = payload.sessionId;
    this.apiUrl = payload.apiUrl;
    this.keepalive = payload.keepaliveSec;
    this.alive();
    this.emit('welcome', payload.sessionId, payload);
  }

  /** No frame (not even a ping) for two keepalive periods and more: the connection is dead. */
  private alive(): void {
    clearTimeout(this.livenessTimer);
    const ws = this.ws;
    this.livenessTimer = setTimeout(
      () => {
        this.options.log('no ping from the service: reconnecting');
        ws?.terminate();
      },
      (this.keepalive * 2 + 10) * 1000,
    );
    this.livenessTimer.unref();
  }

  private result(runId: string, ref: string, payload: StepResultPayload): void {
    this.send('step.result', { runId, ref }, payload);
    this.emit('result', runId, payload);
  }

  private async endRuns(): Promise<void> {
    const runs = [...this.runs.values()];
    this.runs.clear();
    // The service ends those runs as error (executor lost); their contexts are of no more use.
    await Promise.all(runs.map((r) => r.cancel()));
  }

  /** The service refused to resume the lost session (past its window): start a new one on this socket. */
  private resumeRefused(): void {
    this.options.log(`session ${this.resumeFrom} could not be resumed: starting a new one`);
    this.resumeFrom = undefined;
    void this.endRuns();
    this.send('hello', {}, this.options.hello);
  }

  private dropped(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws) return;
    clearTimeout(this.livenessTimer);
    const wasSession = this.sessionId;
    this.sessionId = undefined;
    // Its runs wait for the resume (the service keeps them for its resume window).
    this.resumeFrom = wasSession ?? this.resumeFrom;
    this.emit('disconnect', code, reason);
    if (this.stopped) return void this.endRuns();
    const fatal = FATAL_CLOSES.get(code);
    if (fatal) {
      this.stopped = true;
      void this.endRuns();
      this.emit('fatal', new Error(`${fatal} (close ${code}${reason ? `: ${reason}` : ''})`));
      return;
    }
    const delay = this.reconnectDelay(code);
    this.attempt++;
    this.options.log(
      `${wasSession ? `session ${wasSession} lost` : 'could not connect'} (close ${code}); reconnecting in ${delay} ms`,
    );
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /**
   * After a drain's 4503, what the service said (`reconnect` retryAfterMs: it spreads its fleet);
   * otherwise exponential backoff with full jitter, so that many runners do not return at once.
   */
  private reconnectDelay(code: number): number {
    const told = this.comeBackAfterMs;
    this.comeBackAfterMs = undefined;
    if (code === 4503 && told !== undefined) return told;
    const { baseMs, maxMs } = this.options.backoff ?? { baseMs: 250, maxMs: 15_000 };
    return Math.round(Math.random() * Math.min(maxMs, baseMs * 2 ** this.attempt));
  }
}
