// The extension's OTP connection: hello with its true capabilities, pong, and the frames of its runs
// handled strictly in the order they arrive (each run chains its own work, run.ts). Every frame is
// checked against the protocol's schemas before anything acts on it (inbound.ts); an invalid one is
// answered with an error frame and acted on by nobody. Keeps the MV3 worker alive (a frame every
// 20 s), reconnects with backoff and resumes its session after a cut socket or a restarted worker.

import { ID_PATTERNS } from '../../../src/otp/protocol/schemas/ids.js';
import type {
  Capabilities,
  OutboundMessage,
  RunStartPayload,
  StepExecPayload,
  StepResultPayload,
  WelcomePayload,
} from '../../../src/otp/protocol/schemas/messages.js';
import { firstLine } from '../../../src/otp/protocol/step-rules.js';
import { checkInbound } from './inbound.js';
import { savedRuns, savedSession, saveSession } from './persist.js';
import type { ServiceRest } from './rest.js';
import { RunExecutor } from './run.js';
import { otpAddress, type Settings } from './settings.js';

/** The worker must exchange a frame at least every 30 s to stay alive (Chrome 116+); 20 s leaves room. */
const KEEPALIVE_MS = 20_000;
const FATAL_CLOSES = new Map([
  [4401, 'the token was refused (missing, unknown or revoked)'],
  [4403, 'the token may not open sessions (scope write needed)'],
  [4426, 'the service speaks another major protocol version'],
]);
const MESSAGE_ID = new RegExp(ID_PATTERNS.message);

/** A frame type the core does not handle (record.start, record.stop: recording, part 2); true when handled. */
export type FrameHandler = (frame: OutboundMessage, send: OtpSession['send']) => boolean;

export interface SessionOptions {
  settings: () => Settings;
  rest: ServiceRest;
  log(line: string): void;
  version: string;
  /** Capabilities beyond the core's (recording declares record: true). */
  capabilities?: Partial<Capabilities>;
  onFrame?: FrameHandler;
}

let messageCount = 0;
const messageId = () => `msg_x${Date.now().toString(36)}${(messageCount++).toString(36)}`;

export class OtpSession {
  sessionId?: string;
  apiUrl?: string;
  /** Why the session stopped for good (a refused token); cleared when the settings change. */
  fatal?: string;
  private ws?: WebSocket;
  private readonly runs = new Map<string, RunExecutor>();
  private attempt = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private keepaliveTimer?: ReturnType<typeof setInterval>;
  private lastPingId?: string;
  private resumeFrom?: string;
  /** What a draining service said (`reconnect`): the wait after its 4503 close. */
  private comeBackAfterMs?: number;
  private stopped = false;
  readonly listeners = {
    welcome: [] as Array<(id: string) => void>,
    result: [] as Array<(runId: string, r: StepResultPayload) => void>,
    finished: [] as Array<(runId: string) => void>,
    step: [] as Array<(runId: string, stepIndex: number) => void>,
  };

  constructor(private readonly options: SessionOptions) {}

  /** Picks up what a stopped worker left (its session, its runs), then connects. */
  async start(): Promise<void> {
    this.resumeFrom = await savedSession();
    for (const record of await savedRuns()) {
      const run = new RunExecutor(record, this.runDeps());
      run.restoreInterrupted();
      this.runs.set(record.runId, run);
    }
    this.connect();
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  runOfTab(tabId: number): RunExecutor | undefined {
    for (const run of this.runs.values()) if (run.tabId === tabId) return run;
    return undefined;
  }

  connect(): void {
    clearTimeout(this.retryTimer);
    if (this.stopped || this.ws) return;
    const settings = this.options.settings();
    if (!settings.token || (!settings.serviceUrl && !settings.otpUrl))
      return this.options.log('not connecting: set serviceUrl and token');
    const opening = otpAddress(settings).then(
      (address) => this.open(address, settings.token!),
      (err) => this.retry(`the OTP address is unknown: ${firstLine(err)}`),
    );
    void opening;
  }

  private open(address: string, token: string): void {
    if (this.ws || this.stopped) return;
    const url = `${address}${address.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => this.hello();
    ws.onmessage = (event) => this.received(String(event.data));
    ws.onclose = (event) => this.dropped(ws, event.code, event.reason);
  }

  private hello(resume = true): void {
    const settings = this.options.settings();
    this.send(
      'hello',
      {},
      {
        executor: 'extension',
        name: 'otp-extension',
        version: this.options.version,
        capabilities: {
          record: false,
          replay: true,
          screenshot: true,
          upload: true,
          crossOrigin: true,
          eval: settings.allowEval,
          maxParallel: settings.maxParallel,
          ...this.options.capabilities,
        },
        ...(resume && this.resumeFrom ? { resumeSessionId: this.resumeFrom } : {}),
      },
    );
  }

  send(type: string, fields: { runId?: string; ref?: string }, payload?: unknown): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    const envelope = { otp: '1.0', id: messageId(), ts: new Date().toISOString(), type };
    const session = this.sessionId ? { sessionId: this.sessionId } : {};
    this.ws.send(JSON.stringify({ ...envelope, ...session, ...fields, ...(payload === undefined ? {} : { payload }) }));
  }

  /** Parsed, checked against the protocol's schema, then acted on; an invalid frame is refused. */
  private received(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.refuse(undefined, ['(root): not JSON']);
    }
    const checked = checkInbound(parsed);
    if (!checked.ok) return this.refuse(parsed, checked.problems);
    this.dispatch(checked.frame);
  }

  private refuse(frame: unknown, problems: string[]): void {
    const id = (frame as { id?: unknown } | undefined)?.id;
    const ref = typeof id === 'string' && MESSAGE_ID.test(id) ? { ref: id } : {};
    this.options.log(`refused a frame from the service: ${problems.join('; ')}`);
    this.send('error', ref, {
      code: 'E_INVALID_FRAME',
      message: `the extension refused a frame: ${problems.join('; ')}`.slice(0, 2000),
      details: { fields: problems.slice(0, 20) },
    });
  }

  private dispatch(frame: OutboundMessage): void {
    switch (frame.type) {
      case 'welcome':
        return void this.welcomed(frame.payload, frame.ref);
      case 'ping':
        this.lastPingId = frame.id;
        return this.send('pong', { ref: frame.id });
      case 'run.start':
        return this.runStart(frame.runId, frame.id, frame.payload);
      case 'step.exec':
        return this.stepExec(frame.runId, frame.id, frame.payload);
      case 'run.cancel':
        this.send('ack', { runId: frame.runId, ref: frame.id });
        return void this.runs.get(frame.runId)?.cancel();
      case 'run.finished': {
        const run = this.runs.get(frame.runId);
        this.runs.delete(frame.runId);
        for (const listener of this.listeners.finished) listener(frame.runId);
        return void run?.finish();
      }
      case 'error':
        return this.serviceError(frame.payload);
      case 'ack':
        return;
      case 'reconnect':
        // A draining service says when to come back after its 4503 close (it spreads its fleet).
        this.comeBackAfterMs = frame.payload.retryAfterMs;
        return;
      default:
        if (this.options.onFrame?.(frame, (t, f, p) => this.send(t, f, p))) return;
        this.send(
          'error',
          { ref: frame.id },
          { code: 'E_UNEXPECTED', message: `${frame.type} is not handled by this extension` },
        );
    }
  }

  private runDeps() {
    return {
      rest: this.options.rest,
      allowEval: () => this.options.settings().allowEval,
      log: this.options.log,
      stepStarted: (runId: string, stepIndex: number) => {
        for (const listener of this.listeners.step) listener(runId, stepIndex);
      },
      sendResult: (runId: string, ref: string, payload: StepResultPayload) => {
        this.send('step.result', { runId, ref }, payload);
        for (const listener of this.listeners.result) listener(runId, payload);
      },
    };
  }

  private runStart(runId: string, id: string, payload: RunStartPayload): void {
    this.send('ack', { runId, ref: id });
    // Sent again by a process that took the session over: the run goes on where it was.
    if (this.runs.has(runId)) return;
    this.runs.set(runId, RunExecutor.start(runId, payload, this.runDeps()));
    this.options.log(`run ${runId}: started (${payload.totalSteps} steps)`);
  }

  private stepExec(runId: string, id: string, payload: StepExecPayload): void {
    const run = this.runs.get(runId);
    if (run) return run.enqueue(id, payload);
    this.send(
      'step.result',
      { runId, ref: id },
      {
        stepIndex: payload.stepIndex,
        status: 'error',
        durationMs: 0,
        error: { code: 'E_INTERNAL', message: 'step.exec for a run this extension did not start' },
      },
    );
  }

  private serviceError(payload: { code: string; message: string }): void {
    if (this.resumeFrom && !this.sessionId && payload.message.includes('cannot be resumed')) {
      this.options.log(`session ${this.resumeFrom} could not be resumed: starting a new one`);
      this.resumeFrom = undefined;
      void this.endRuns();
      return this.hello(false);
    }
    this.options.log(`service error ${payload.code}: ${payload.message}`);
  }

  private async welcomed(payload: WelcomePayload, ref: string | undefined): Promise<void> {
    this.attempt = 0;
    if (!payload.resumed) await this.endRuns();
    this.resumeFrom = undefined;
    this.sessionId = payload.sessionId;
    this.apiUrl = payload.apiUrl;
    this.lastPingId ??= ref;
    await saveSession(payload.sessionId);
    clearInterval(this.keepaliveTimer);
    // An unsolicited pong (the service accepts one) keeps the socket, and so the worker, busy.
    this.keepaliveTimer = setInterval(
      () => this.lastPingId && this.send('pong', { ref: this.lastPingId }),
      KEEPALIVE_MS,
    );
    this.options.log(`session ${payload.sessionId}${payload.resumed ? ' resumed' : ''}`);
    for (const listener of this.listeners.welcome) listener(payload.sessionId);
  }

  private async endRuns(): Promise<void> {
    const runs = [...this.runs.values()];
    this.runs.clear();
    await Promise.all(runs.map((r) => r.cancel()));
  }

  private dropped(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws) return;
    this.ws = undefined;
    clearInterval(this.keepaliveTimer);
    this.resumeFrom = this.sessionId ?? this.resumeFrom;
    this.sessionId = undefined;
    const fatal = FATAL_CLOSES.get(code);
    if (fatal) {
      this.fatal = fatal;
      void saveSession(undefined);
      void this.endRuns();
      return this.options.log(`stopped: ${fatal} (close ${code}${reason ? `: ${reason}` : ''})`);
    }
    const told = code === 4503 ? this.comeBackAfterMs : undefined;
    this.comeBackAfterMs = undefined;
    this.retry(`connection closed (${code})`, told);
  }

  /** Reconnects after `delayMs`, else an exponential backoff with full jitter (250 ms doubling up to 15 s). */
  private retry(why: string, delayMs?: number): void {
    if (this.stopped) return;
    const delay = delayMs ?? Math.round(Math.random() * Math.min(15_000, 250 * 2 ** this.attempt));
    this.attempt++;
    this.options.log(`${why}; reconnecting in ${delay} ms`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** Closes the connection for good (new settings make a new session). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.keepaliveTimer);
    this.ws?.close(1000, 'extension settings changed');
    this.ws = undefined;
    await saveSession(undefined);
    await this.endRuns();
  }

  /** Test hook: cuts the socket as a network failure would (the session reconnects and resumes). */
  drop(): void {
    const ws = this.ws;
    if (!ws) return;
    ws.onclose = null;
    ws.close(4000, 'dropped');
    this.dropped(ws, 1006, 'dropped');
  }
}
