// Prometheus metrics of one service process (prom-client, one registry per service): executor
// sessions, runs by outcome, step dispatch latency, the group commit's batches, REST latency by
// route, rate-limit refusals, refused credentials, and Node's own (event-loop delay, memory, GC).
// The rooms do not import this one: the engine reports through its EngineEvents port, REST through
// the observer of rest/app.ts, the step paths through their diagnostics channels.
import diagnostics from 'node:diagnostics_channel';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabaseHealthStats } from '../db/health.js';
import type { EngineEvents, StepDispatchMessage, StepWriteMessage } from '../otp/engine/diagnostics.js';
import type { RequestSample } from '../rest/middleware/observe.js';

export interface MetricsSources {
  /** Runs this process drives now. */
  activeRuns(): number;
  /** What this process knows of PostgreSQL's availability (src/db/health.ts). */
  database?(): DatabaseHealthStats;
}

/** A counter whose value is read from a source at each scrape (prom-client counters cannot be set). */
function counterOf(name: string, help: string, registers: Registry[], read: () => number | undefined): Counter {
  return new Counter({
    name,
    help,
    registers,
    collect() {
      const value = read();
      if (value === undefined) return;
      this.reset();
      this.inc(value);
    },
  });
}

/**
 * Node's own metrics (event-loop delay, memory, GC, handles) describe the process, not one service:
 * collected once per process, into a registry of their own, merged into every scrape. (Collecting
 * them per service would start an event-loop monitor for every service a test process starts.)
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The metrics read from the process's sources at each scrape: runs driven, PostgreSQL's availability. */
function readAtScrape(sources: MetricsSources, registers: Registry[]): void {
  new Gauge({
    name: 'otp_runs_active',
    help: 'Runs this process drives now',
    registers,
    collect() {
      this.set(sources.activeRuns());
    },
  });
  // Outages of PostgreSQL as this process met them (docs/operations.md, "When PostgreSQL goes away").
  new Gauge({
    name: 'db_available',
    help: '1 while this process reaches PostgreSQL, 0 during an outage',
    registers,
    collect() {
      const d = sources.database?.();
      if (d) this.set(d.available ? 1 : 0);
    },
  });
  counterOf(
    'db_outages_total',
    'Outages of PostgreSQL this process met',
    registers,
    () => sources.database?.().outages,
  );
  counterOf('db_unavailable_seconds_total', 'Time this process spent without PostgreSQL', registers, () => {
    const d = sources.database?.();
    return d && d.unavailableMs / 1000;
  });
  new Gauge({
    name: 'otp_runs_held',
    help: 'Runs whose write waits for PostgreSQL to come back',
    registers,
    collect() {
      const d = sources.database?.();
      if (d) this.set(d.heldRuns);
    },
  });
  counterOf(
    'db_writes_retried_total',
    'Writes tried again after an outage of PostgreSQL (step results, verdicts, recording frames)',
    registers,
    () => sources.database?.().retriedWrites,
  );
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly sessions: Gauge;
  private readonly sessionsOpened: Counter;
  private readonly sessionsClosed: Counter<'code'>;
  private readonly runsClaimed: Counter;
  private readonly runsFinished: Counter<'status'>;
  private readonly runDuration: Histogram<'status'>;
  private readonly stepDispatch: Histogram;
  private readonly batchRows: Histogram;
  private readonly commitSeconds: Histogram;
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly rateLimited: Counter;
  private readonly refused: Counter<'transport'>;
  private readonly transportInfo: Gauge<'transport'>;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    this.sessions = new Gauge({
      name: 'otp_sessions_open',
      help: 'Executor sessions open on this process (welcomed, not yet closed)',
      registers,
    });
    this.sessionsOpened = new Counter({
      name: 'otp_sessions_opened_total',
      help: 'Executor sessions welcomed',
      registers,
    });
    this.sessionsClosed = new Counter({
      name: 'otp_sessions_closed_total',
      help: 'Executor sessions closed, by WebSocket close code',
      labelNames: ['code'],
      registers,
    });
    readAtScrape(sources, registers);
    this.runsClaimed = new Counter({
      name: 'otp_runs_claimed_total',
      help: 'Runs claimed by sessions of this process',
      registers,
    });
    this.runsFinished = new Counter({
      name: 'otp_runs_finished_total',
      help: 'Runs finished by this process, by status',
      labelNames: ['status'],
      registers,
    });
    this.runDuration = new Histogram({
      name: 'otp_run_duration_seconds',
      help: 'Time from claim to verdict',
      labelNames: ['status'],
      registers,
      buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
    });
    this.stepDispatch = new Histogram({
      name: 'otp_step_dispatch_seconds',
      help: 'From a step.result arriving to the next step.exec leaving (the write included)',
      registers,
      buckets: LATENCY_BUCKETS,
    });
    this.batchRows = new Histogram({
      name: 'otp_step_write_batch_rows',
      help: 'Step outcomes per group-commit statement',
      registers,
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
    });
    this.commitSeconds = new Histogram({
      name: 'otp_step_write_seconds',
      help: 'Time of one group-commit statement, sent to committed',
      registers,
      buckets: LATENCY_BUCKETS,
    });
    this.requests = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'REST requests by method, route (its template) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
      buckets: LATENCY_BUCKETS,
    });
    this.rateLimited = new Counter({
      name: 'http_rate_limited_total',
      help: 'REST requests refused by the per-key rate limit (429)',
      registers,
    });
    this.refused = new Counter({
      name: 'auth_refused_total',
      help: 'Requests and connections refused for their credentials (unknown, revoked or too weak a key)',
      labelNames: ['transport'],
      registers,
    });
    this.transportInfo = new Gauge({
      name: 'otp_transport_info',
      help: 'The OTP transport of this process (uws: uWebSockets.js, ws: the ws package on node:http), set to 1',
      labelNames: ['transport'],
      registers,
    });
    // The step channels belong to the Node process: with two services in one process (tests), each counts both.
    this.listen<StepDispatchMessage>('otp:step.dispatch', (m) => this.stepDispatch.observe(m.ms / 1000));
    this.listen<StepWriteMessage>('otp:step.write', (m) => {
      this.batchRows.observe(m.rows);
      this.commitSeconds.observe(m.ms / 1000);
    });
  }

  private listen<T>(channel: string, fn: (message: T) => void): void {
    const handler = (message: unknown) => fn(message as T);
    diagnostics.subscribe(channel, handler);
    this.unsubscribe.push(() => diagnostics.unsubscribe(channel, handler));
  }

  /** The engine's port (EngineEvents). */
  readonly engine: EngineEvents = {
    sessionOpened: () => {
      this.sessions.inc();
      this.sessionsOpened.inc();
    },
    sessionClosed: (code) => {
      this.sessions.dec();
      this.sessionsClosed.inc({ code: String(code) });
    },
    runClaimed: () => this.runsClaimed.inc(),
    runFinished: (status, durationMs) => {
      this.runsFinished.inc({ status });
      this.runDuration.observe({ status }, durationMs / 1000);
    },
  };

  /** One REST request answered (rest/middleware/observe.ts). */
  request(sample: RequestSample): void {
    this.requests.observe(
      { method: sample.method, route: sample.route, status: String(sample.status) },
      sample.ms / 1000,
    );
    if (sample.status === 429) this.rateLimited.inc();
    if (sample.status === 401) this.refused.inc({ transport: 'rest' });
  }

  /** Which adapter carries OTP frames in this process (uws or ws): one series set to 1. */
  transport(name: string): void {
    this.transportInfo.set({ transport: name }, 1);
  }

  /** An OTP connection refused for its key. */
  refusedConnection(): void {
    this.refused.inc({ transport: 'otp' });
  }

  /** The text exposition format: this service's metrics and the process's. */
  text(): Promise<string> {
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
    this.registry.clear();
  }
}
