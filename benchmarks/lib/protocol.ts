// Messages between the harness and its executor worker processes (over the fork IPC channel).

export interface OtpConnect {
  op: 'otp-connect';
  url: string;
  key: string;
  count: number;
  /** Connections opening at once in this worker. */
  concurrency: number;
  maxParallel: number;
  /** After a 4503 close, resume the session here (after the reconnect frame's retryAfterMs). */
  resumeUrl?: string;
}

export interface OtpDrive {
  op: 'otp-drive';
  api: string;
  key: string;
  /** Each run is one of these test cases, picked at random (so that runs of several lengths mix). */
  testCaseIds: string[];
  /** Runs each session keeps posted for itself (pinned by sessionId): maxParallel fills it, +1 keeps one queued. */
  runsAhead: number;
  /** Mean time the simulated executor "performs" each step before answering (0 = at once; else 0.5× to 1.5× of it). */
  stepDelayMs: number;
  /** Runs each session posts in all (no limit when absent). */
  runsPerSession?: number;
  /** Only the first this many executors of each worker post runs (all when absent). */
  sessions?: number;
}

export interface RawConnect {
  op: 'raw-connect';
  url: string;
  count: number;
  concurrency: number;
}

export interface EchoDrive {
  op: 'echo-drive';
  /** Request streams per connection, each one frame in flight (like runs on a session). */
  streams: number;
  delayMs: number;
}

/** GETs the urls in turn, one request at a time, pausing between them (a tenant's REST latency). */
export interface RestProbe {
  op: 'rest-probe';
  urls: string[];
  key: string;
  pauseMs: number;
}

export type Command =
  | OtpConnect
  | OtpDrive
  | RawConnect
  | EchoDrive
  | RestProbe
  /** Zero the window counters and start recording latency samples. */
  | { op: 'reset'; latency: boolean }
  /** The counters and samples since the last reset. */
  | { op: 'collect' }
  /** Stop sending anything new (no more results, posts or echo frames). */
  | { op: 'quiesce' }
  | { op: 'close' };

/** Cumulative counters, pushed every second as a tick and part of every collect. */
export interface Counters {
  connected: number;
  /** Round trips completed (engine: step.result answered by the next frame; echo: frame answered). */
  roundTrips: number;
  /** step.result frames sent since the worker started (for the durability check). */
  resultsSent: number;
  runsStarted: number;
  runsFinished: number;
  posts: number;
  postFailures: number;
  pings: number;
  errorFrames: number;
  /** Sessions welcomed back (resumed) after a 4503. */
  resumed: number;
  /** step.exec for a step whose result was sent already (expected once per run in flight after a resume). */
  resultsResent: number;
  /** step.exec for a step before the last one performed: a step the service would have performed twice. */
  performedTwice: number;
}

export interface Collected {
  elapsedMs: number;
  window: Counters;
  total: Counters;
  /** ms, step.result sent → next step.exec received (engine) or frame sent → answer (echo). */
  roundTripMs: number[];
  /** ms, POST /otp/runs request start → run.start received. */
  dispatchMs: number[];
  /** ms, POST /otp/runs request start → its response. */
  postMs: number[];
  /** ms, a rest-probe GET request start → its response. */
  restMs: number[];
  /** Closes by code, since the worker started. */
  closes: Record<string, number>;
  /** The longest time between two pings on one session, and the sessions that saw no ping in the window. */
  maxPingGapMs: number;
  sessionsWithoutPing: number;
  errorSamples: string[];
  /** When the worker's last session was resumed, ms since the epoch (0: none). */
  lastResumedAt: number;
}

export type WorkerMessage =
  | { seq: number; ok: true; result?: unknown }
  | { seq: number; ok: false; error: string }
  | { tick: Counters };
