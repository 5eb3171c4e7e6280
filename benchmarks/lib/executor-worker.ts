// A worker process of simulated executors: many `ws` connections speaking real OTP to the service
// (or step-sized frames to a baseline server), driven by the harness over the fork IPC channel.
// Everything that costs the client CPU (a JSON.parse per frame in, a JSON.stringify per frame out)
// is the same for the engine and for the baselines, so their figures can be compared.
import WebSocket from 'ws';
import { msgId, stepResultFrame } from './frames.js';
import type {
  Collected,
  Command,
  Counters,
  EchoDrive,
  OtpConnect,
  OtpDrive,
  RawConnect,
  RestProbe,
  WorkerMessage,
} from './protocol.js';

const zero = (): Counters => ({
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
});
/** When the last session of this worker was welcomed back (resumed), ms since the epoch. */
let lastResumedAt = 0;

const total = zero();
let atReset = zero();
let windowStart = performance.now();
let recordLatency = false;
let roundTripMs: number[] = [];
let dispatchMs: number[] = [];
let postMs: number[] = [];
let restMs: number[] = [];
const closes: Record<string, number> = {};
const errorSamples: string[] = [];
let quiesced = false;

function sample(list: number[], ms: number): void {
  if (recordLatency) list.push(ms);
}

function noteError(text: string): void {
  total.errorFrames++;
  if (errorSamples.length < 5) errorSamples.push(text.slice(0, 300));
}

interface Frame {
  type: string;
  id: string;
  sessionId?: string;
  runId?: string;
  payload?: any;
}

// ---- OTP executors ------------------------------------------------------------------------------

let drive: OtpDrive | undefined;
const executors: Executor[] = [];

class Executor {
  ws: WebSocket;
  sessionId = '';
  readonly ready: Promise<void>;
  /** When this executor sent its last step.result per run (for the round-trip time). */
  private readonly resultSentAt = new Map<string, number>();
  lastPingAt = 0;
  pingsInWindow = 0;
  maxPingGapMs = 0;
  closing = false;
  posted = 0;
  /** Runs are posted only by the first `drive.sessions` executors of the worker. */
  readonly index = executors.length;
  /** resume storms: the last step performed per run, and what the service said before its 4503. */
  private readonly lastStep = new Map<string, number>();
  private comeBackAfterMs?: number;

  constructor(
    url: string,
    private readonly key: string,
    private readonly maxParallel: number,
    /** Where to resume the session after a 4503 (resume storms); none: a 4503 just closes. */
    private readonly resumeUrl?: string,
  ) {
    this.ws = this.open(url);
    this.ready = new Promise((resolve, reject) => {
      this.ws.once('error', reject);
      this.ws.once('close', (code) => reject(new Error(`closed before welcome (${code})`)));
      this.onWelcome = () => {
        total.connected++;
        resolve();
      };
    });
  }

  private open(url: string, resumeSessionId?: string): WebSocket {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.key}` }, perMessageDeflate: false });
    ws.once('open', () => {
      const capabilities = { maxParallel: this.maxParallel };
      const hello = { executor: 'bench', name: 'bench-executor', version: '1.0.0', capabilities };
      this.send({ type: 'hello', payload: resumeSessionId ? { ...hello, resumeSessionId } : hello });
    });
    ws.on('message', (data) => this.onFrame(JSON.parse(data.toString()) as Frame));
    ws.on('close', (code, reason) => this.closed(ws, code, reason.toString()));
    ws.on('error', () => {});
    return ws;
  }

  private closed(ws: WebSocket, code: number, reason: string): void {
    // Closes other than a drain's say why (4408 is both 'no hello' and 'resume not answered').
    const key = code === 4503 || code === 1000 || !reason ? String(code) : `${code} ${reason}`;
    closes[key] = (closes[key] ?? 0) + 1;
    if (ws !== this.ws || !this.sessionId) return;
    total.connected--;
    if (code !== 4503 || !this.resumeUrl || quiesced) return;
    // A drain: come back when told (the reconnect frame), else at once, and resume the session.
    const sessionId = this.sessionId;
    const delay = this.comeBackAfterMs ?? 0;
    this.comeBackAfterMs = undefined;
    this.sessionId = '';
    setTimeout(() => {
      this.ws = this.open(this.resumeUrl!, sessionId);
      this.onWelcome = () => {
        total.connected++;
        total.resumed++;
        lastResumedAt = Date.now();
      };
    }, delay);
  }

  private onWelcome: () => void = () => {};

  private send(frame: { type: string; runId?: string; ref?: string; payload?: unknown }): void {
    this.ws.send(
      JSON.stringify({
        otp: '1.0',
        id: msgId(),
        ts: new Date().toISOString(),
        type: frame.type,
        ...(this.sessionId ? { sessionId: this.sessionId } : {}),
        ...(frame.runId ? { runId: frame.runId } : {}),
        ...(frame.ref ? { ref: frame.ref } : {}),
        payload: frame.payload ?? {},
      }),
    );
  }

  private onFrame(frame: Frame): void {
    switch (frame.type) {
      case 'welcome':
        this.sessionId = frame.payload.sessionId;
        this.onWelcome();
        if (drive && !frame.payload.resumed) this.postRuns(drive.runsAhead);
        return;
      case 'reconnect':
        this.comeBackAfterMs = frame.payload.retryAfterMs;
        return;
      case 'ping': {
        const now = performance.now();
        this.send({ type: 'pong', ref: frame.id });
        total.pings++;
        this.pingsInWindow++;
        if (this.lastPingAt) this.maxPingGapMs = Math.max(this.maxPingGapMs, now - this.lastPingAt);
        this.lastPingAt = now;
        return;
      }
      case 'run.start':
        total.runsStarted++;
        runStarted(frame.runId!);
        this.send({ type: 'ack', runId: frame.runId, ref: frame.id });
        return;
      case 'step.exec': {
        const sentAt = this.resultSentAt.get(frame.runId!);
        if (sentAt !== undefined) {
          total.roundTrips++;
          sample(roundTripMs, performance.now() - sentAt);
        }
        if (quiesced) return;
        if (this.resumeUrl && this.performedBefore(frame)) return this.result(frame);
        const answer = () => this.result(frame);
        // A simulated step takes stepDelayMs on average, uniformly 0.5× to 1.5× of it, so that runs
        // started together drift apart as real ones do.
        if (drive?.stepDelayMs) setTimeout(answer, drive.stepDelayMs * (0.5 + Math.random()));
        else answer();
        return;
      }
      case 'run.finished':
        this.lastStep.delete(frame.runId!);
        if (this.resultSentAt.delete(frame.runId!)) total.roundTrips++;
        total.runsFinished++;
        if (drive && !quiesced) this.postRuns(1);
        return;
      case 'error':
        noteError(JSON.stringify(frame.payload));
        return;
      default:
    }
  }

  private result(exec: Frame): void {
    if (quiesced || this.ws.readyState !== WebSocket.OPEN) return;
    this.resultSentAt.set(exec.runId!, performance.now());
    total.resultsSent++;
    this.ws.send(stepResultFrame(this.sessionId, exec.runId!, exec.id, exec.payload.stepIndex));
  }

  /**
   * A step.exec for a step already performed: its result again, never the step (docs/protocol.md,
   * "Each step runs once"). One before the last performed would be a step performed twice.
   */
  private performedBefore(exec: Frame): boolean {
    const runId = exec.runId!;
    const step = exec.payload.stepIndex as number;
    const last = this.lastStep.get(runId) ?? -1;
    if (step < last) total.performedTwice++;
    if (step <= last) {
      total.resultsResent++;
      return true;
    }
    this.lastStep.set(runId, step);
    return false;
  }

  postRuns(count: number): void {
    if (drive?.sessions !== undefined && this.index >= drive.sessions) return;
    const limit = drive?.runsPerSession ?? Infinity;
    for (let i = 0; i < count && this.posted < limit; i++) {
      this.posted++;
      void postRun(this.sessionId);
    }
  }
}

/** POST start times by run id, and run.start arrivals that beat their POST's response. */
const postedAt = new Map<string, number>();
const startedBeforeAnswer = new Map<string, number>();

function runStarted(runId: string): void {
  const at = postedAt.get(runId);
  if (at === undefined) {
    startedBeforeAnswer.set(runId, performance.now());
    return;
  }
  postedAt.delete(runId);
  if (at >= windowStart) sample(dispatchMs, performance.now() - at);
}

async function postRun(sessionId: string): Promise<void> {
  const d = drive!;
  const started = performance.now();
  total.posts++;
  try {
    const res = await fetch(`${d.api}/otp/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        testCaseIds: [d.testCaseIds[Math.floor(Math.random() * d.testCaseIds.length)]],
        sessionId,
      }),
    });
    const body = (await res.json()) as { runId?: string };
    if (started >= windowStart) sample(postMs, performance.now() - started);
    if (res.status !== 202 || !body.runId)
      throw new Error(`POST /otp/runs answered ${res.status}: ${JSON.stringify(body).slice(0, 200)}`);
    const early = startedBeforeAnswer.get(body.runId);
    if (early !== undefined) {
      startedBeforeAnswer.delete(body.runId);
      if (started >= windowStart) sample(dispatchMs, early - started);
    } else {
      postedAt.set(body.runId, started);
    }
  } catch (err) {
    total.postFailures++;
    if (!quiesced) noteError(String(err));
  }
}

async function connectMany<T>(
  count: number,
  concurrency: number,
  open: () => Promise<T>,
): Promise<{ ok: number; failed: number; firstError?: string }> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const lane = async () => {
    while (next < count) {
      next++;
      try {
        await open();
        ok++;
      } catch (err) {
        failed++;
        firstError ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { ok, failed, firstError };
}

async function otpConnect(cmd: OtpConnect) {
  return connectMany(cmd.count, cmd.concurrency, async () => {
    const executor = new Executor(cmd.url, cmd.key, cmd.maxParallel, cmd.resumeUrl);
    executors.push(executor);
    await executor.ready;
  });
}

// ---- REST probe ---------------------------------------------------------------------------------

async function restProbe(cmd: RestProbe): Promise<void> {
  for (let i = 0; !quiesced; i++) {
    const started = performance.now();
    try {
      const res = await fetch(cmd.urls[i % cmd.urls.length]!, { headers: { authorization: `Bearer ${cmd.key}` } });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`GET answered ${res.status}`);
      sample(restMs, performance.now() - started);
    } catch (err) {
      noteError(String(err));
    }
    await new Promise((resolve) => setTimeout(resolve, cmd.pauseMs));
  }
}

// ---- raw connections (baselines) ----------------------------------------------------------------

const raws: WebSocket[] = [];
let echo: EchoDrive | undefined;

async function rawConnect(cmd: RawConnect) {
  return connectMany(cmd.count, cmd.concurrency, async () => {
    const ws = new WebSocket(cmd.url, { perMessageDeflate: false });
    raws.push(ws);
    const index = raws.length;
    const sentAt = new Map<string, number>();
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      const at = sentAt.get(frame.runId!);
      if (at === undefined) return;
      total.roundTrips++;
      sample(roundTripMs, performance.now() - at);
      if (quiesced) return;
      const again = () => sendEcho(ws, sentAt, frame.runId!, frame.payload.stepIndex);
      if (echo?.delayMs) setTimeout(again, echo.delayMs);
      else again();
    });
    ws.on('close', (code) => {
      closes[code] = (closes[code] ?? 0) + 1;
      total.connected--;
    });
    (ws as WebSocket & { streamsFor?: (n: number) => void }).streamsFor = (n) => {
      for (let s = 0; s < n; s++) sendEcho(ws, sentAt, `otr_b${index}x${s}`, 0);
    };
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        total.connected++;
        resolve();
      });
      ws.once('error', reject);
    });
  });
}

function sendEcho(ws: WebSocket, sentAt: Map<string, number>, runId: string, stepIndex: number): void {
  if (quiesced || ws.readyState !== WebSocket.OPEN) return;
  sentAt.set(runId, performance.now());
  ws.send(stepResultFrame('ots_baseline', runId, msgId(), stepIndex));
}

// ---- commands -----------------------------------------------------------------------------------

function collect(): Collected {
  const window = zero();
  for (const k of Object.keys(total) as Array<keyof Counters>) window[k] = total[k] - atReset[k];
  window.connected = total.connected;
  let maxPingGapMs = 0;
  let sessionsWithoutPing = 0;
  for (const e of executors) {
    maxPingGapMs = Math.max(maxPingGapMs, e.maxPingGapMs);
    if (e.sessionId && e.pingsInWindow === 0) sessionsWithoutPing++;
  }
  return {
    elapsedMs: performance.now() - windowStart,
    window,
    total: { ...total },
    roundTripMs,
    dispatchMs,
    postMs,
    restMs,
    closes: { ...closes },
    maxPingGapMs,
    sessionsWithoutPing,
    errorSamples: [...errorSamples],
    lastResumedAt,
  };
}

async function closeAll(): Promise<void> {
  quiesced = true;
  const sockets = [...executors.map((e) => e.ws), ...raws];
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once('close', () => resolve());
          ws.close(1000, 'bench done');
          setTimeout(() => {
            ws.terminate();
            resolve();
          }, 2000).unref();
        }),
    ),
  );
}

async function handle(cmd: Command): Promise<unknown> {
  switch (cmd.op) {
    case 'otp-connect':
      return otpConnect(cmd);
    case 'otp-drive':
      drive = cmd;
      for (const e of executors) if (e.sessionId) e.postRuns(cmd.runsAhead);
      return undefined;
    case 'raw-connect':
      return rawConnect(cmd);
    case 'echo-drive':
      echo = cmd;
      for (const ws of raws) (ws as WebSocket & { streamsFor?: (n: number) => void }).streamsFor?.(cmd.streams);
      return undefined;
    case 'rest-probe':
      void restProbe(cmd);
      return undefined;
    case 'reset':
      atReset = { ...total };
      windowStart = performance.now();
      recordLatency = cmd.latency;
      roundTripMs = [];
      dispatchMs = [];
      postMs = [];
      restMs = [];
      for (const e of executors) {
        e.pingsInWindow = 0;
        e.maxPingGapMs = 0;
      }
      return undefined;
    case 'collect':
      return collect();
    case 'quiesce':
      quiesced = true;
      return undefined;
    case 'close':
      await closeAll();
      return undefined;
  }
}

// A write after the parent went (its channel closed before 'disconnect' arrived) fails with EPIPE;
// with a callback Node hands the error to it instead of throwing it as an 'error' event.
const reply = (message: WorkerMessage) => {
  if (!process.connected) return;
  process.send?.(message, undefined, undefined, (err: Error | null) => {
    if (err) process.exit(0);
  });
};

process.on('message', (cmd: Command & { seq: number }) => {
  handle(cmd).then(
    (result) => reply({ seq: cmd.seq, ok: true, result }),
    (err) => reply({ seq: cmd.seq, ok: false, error: String(err?.stack ?? err) }),
  );
});
process.on('disconnect', () => process.exit(0));
setInterval(() => reply({ tick: { ...total } }), 1000).unref();
reply({ tick: { ...total } });
