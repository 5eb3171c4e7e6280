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
});

const total = zero();
let atReset = zero();
let windowStart = performance.now();
let recordLatency = false;
let roundTripMs: number[] = [];
let dispatchMs: number[] = [];
let postMs: number[] = [];
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
  readonly ws: WebSocket;
  sessionId = '';
  readonly ready: Promise<void>;
  /** When this executor sent its last step.result per run (for the round-trip time). */
  private readonly resultSentAt = new Map<string, number>();
  lastPingAt = 0;
  pingsInWindow = 0;
  maxPingGapMs = 0;
  closing = false;
  posted = 0;

  constructor(url: string, key: string, maxParallel: number) {
    this.ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` }, perMessageDeflate: false });
    this.ready = new Promise((resolve, reject) => {
      this.ws.once('error', reject);
      this.ws.once('close', (code) => reject(new Error(`closed before welcome (${code})`)));
      this.ws.once('open', () => {
        this.send({
          type: 'hello',
          payload: { executor: 'bench', name: 'bench-executor', version: '1.0.0', capabilities: { maxParallel } },
        });
      });
      this.onWelcome = () => {
        total.connected++;
        resolve();
      };
    });
    this.ws.on('message', (data) => this.onFrame(JSON.parse(data.toString()) as Frame));
    this.ws.on('close', (code) => {
      closes[code] = (closes[code] ?? 0) + 1;
      if (this.sessionId) total.connected--;
    });
    this.ws.on('error', () => {});
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
        if (drive) this.postRuns(drive.runsAhead);
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
        const answer = () => this.result(frame);
        // A simulated step takes stepDelayMs on average, uniformly 0.5× to 1.5× of it, so that runs
        // started together drift apart as real ones do.
        if (drive?.stepDelayMs) setTimeout(answer, drive.stepDelayMs * (0.5 + Math.random()));
        else answer();
        return;
      }
      case 'run.finished':
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

  postRuns(count: number): void {
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
    const executor = new Executor(cmd.url, cmd.key, cmd.maxParallel);
    executors.push(executor);
    await executor.ready;
  });
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
    closes: { ...closes },
    maxPingGapMs,
    sessionsWithoutPing,
    errorSamples: [...errorSamples],
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
    case 'reset':
      atReset = { ...total };
      windowStart = performance.now();
      recordLatency = cmd.latency;
      roundTripMs = [];
      dispatchMs = [];
      postMs = [];
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

const reply = (message: WorkerMessage) => process.send?.(message);

process.on('message', (cmd: Command & { seq: number }) => {
  handle(cmd).then(
    (result) => reply({ seq: cmd.seq, ok: true, result }),
    (err) => reply({ seq: cmd.seq, ok: false, error: String(err?.stack ?? err) }),
  );
});
process.on('disconnect', () => process.exit(0));
setInterval(() => reply({ tick: { ...total } }), 1000).unref();
reply({ tick: { ...total } });
