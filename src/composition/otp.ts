// The OTP rooms as the service uses them: the run stores on their own connections, the engine, the
// background work every process does for the others (heartbeats, the orphan check, the reconcile),
// and the listener executors connect to.
import { keyIdsOfProject } from '../auth/keys.js';
import type { Principals } from '../auth/principals.js';
import type { Config } from '../config.js';
import type { ChangeEvents } from '../db/change-events.js';
import { DedicatedConnection } from '../db/dedicated-connection.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import { OtpEngine } from '../otp/engine/engine.js';
import { InstanceRegistry } from '../otp/engine/instances.js';
import { OrphanCheck } from '../otp/engine/orphans.js';
import type { RunDriverDeps } from '../otp/engine/run-driver.js';
import type { TestCaseSink } from '../otp/engine/test-case-source.js';
import { InstanceStore } from '../otp/store/instance-store.js';
import { RecordingStore } from '../otp/store/recording-store.js';
import type { QueueClaims } from '../otp/store/run-queue.js';
import { RunStore } from '../otp/store/run-store.js';
import { RunTraceStore } from '../otp/store/run-trace.js';
import { RunViewCache } from '../otp/store/run-view-cache.js';
import { RunViews } from '../otp/store/run-views.js';
import { SessionTransferStore } from '../otp/store/session-transfer.js';
import { createOtpTransport, type TransportName } from '../otp/transport/index.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

export interface RunStores {
  store: RunStore;
  /** Finished runs as GET /otp/runs/:id answers them, in memory. */
  runViews: RunViewCache;
  views: RunViews;
  instanceStore: InstanceStore;
}

/**
 * The run stores. The engine's hot statements are on connections of their own: the group commit of
 * step results (one statement in flight at a time), the claims and inserts of runs, and the group
 * commit of their verdicts (so that a claim or an insert never waits behind the finishes). The two
 * group commits are planned for each batch's own length (see dedicated-connection.ts).
 */
export function runStores(
  config: Config,
  database: Database,
  instanceId: string,
  events: ChangeEvents,
  teardown: Teardown,
  queuePolicy?: QueueClaims['policy'],
): RunStores {
  const { url, db, quietLog, notifier } = database;
  const connection = (name: string, what: string, customPlans = false) => {
    const onError = (err: unknown) => quietLog.error(`${what} connection failed`, { err });
    const opened = new DedicatedConnection(url, `${name} ${instanceId}`, onError, customPlans ? { customPlans } : {});
    teardown.add(`${what} connection`, () => opened.end());
    return opened;
  };
  const connections = {
    steps: connection('otp-steps', 'step-result', true),
    runs: connection('otp-runs', 'run'),
    finishes: connection('otp-finishes', 'verdict', true),
  };
  const store = new RunStore(db, connections, events, { mode: config.otp.queue, policy: queuePolicy });
  const runViews = new RunViewCache(config.runViewCacheBytes);
  // A run's evidence changed (a trigger's notice); after a lost connection, any may have.
  notifier.on('run-view', (notice) => runViews.invalidate(notice.runId));
  notifier.onReconnected(() => runViews.clear());
  return { store, runViews, views: new RunViews(db), instanceStore: new InstanceStore(db, store) };
}

export interface EngineParts {
  config: Config;
  database: Database;
  stores: RunStores;
  instanceId: string;
  events: ChangeEvents;
  testCaseSink: TestCaseSink;
  runHooks: Pick<RunDriverDeps, 'verifyEvidence' | 'onFinished'>;
  metrics: ServiceMetrics;
  /** The service's HTTP base address (known once the REST listener is bound). */
  baseUrl(): string;
}

/** The engine; its stop ends what is left of its sessions and runs (the drain comes before, in `stop`). */
export function otpEngine(parts: EngineParts, teardown: Teardown): OtpEngine {
  const { config, database, stores, instanceId } = parts;
  const { db, quietLog, notifier, health } = database;
  const lately = Math.min(config.instanceTimeoutMs, 3 * config.heartbeatMs);
  const engine = new OtpEngine({
    store: stores.store,
    views: stores.views,
    testCaseSink: parts.testCaseSink,
    recordingStore: new RecordingStore(db, parts.events),
    projectKeyIds: (projectId) => keyIdsOfProject(db, projectId),
    notices: notifier,
    traces: new RunTraceStore(db),
    transferStore: new SessionTransferStore(db),
    // Processes that heart-beat lately can take over the sessions of a draining one.
    livePeers: () => stores.instanceStore.livePeerCount(instanceId, lately),
    // A holder that heart-beats lately is alive, however long it takes to acknowledge an ask.
    holderBeats: (holder) => stores.instanceStore.beatsWithin(holder, lately),
    config,
    apiUrl: parts.baseUrl,
    instanceId,
    log: quietLog,
    health,
    events: parts.metrics.engine,
    runHooks: parts.runHooks,
  });
  teardown.add('OTP engine', () => engine.shutdown());
  return engine;
}

/**
 * What every process does for the others: its heartbeat (and finishing the work of a silent peer),
 * the orphan check, and the reconcile behind notices.
 */
export async function otpBackground(
  config: Config,
  database: Database,
  parts: { stores: RunStores; engine: OtpEngine; instanceId: string },
  teardown: Teardown,
): Promise<OrphanCheck> {
  const { health, quietLog } = database;
  const { stores, engine, instanceId } = parts;
  // Peers cannot heart-beat during an outage: judge none silent until they have had time to after it.
  const paused = () => !health.available || health.recentlyRecovered(2 * config.heartbeatMs + 1_000);
  const { heartbeatMs, instanceTimeoutMs: timeoutMs } = config;
  const instances = new InstanceRegistry(stores.instanceStore, quietLog, instanceId, {
    heartbeatMs,
    timeoutMs,
    paused,
  });
  await instances.start();
  teardown.add('instance heartbeat', () => instances.stop());
  const orphans = new OrphanCheck({
    instances: stores.instanceStore,
    runs: stores.store,
    instanceId,
    drives: (runId) => engine.drives(runId),
    log: quietLog,
    intervalMs: config.orphanCheckMs,
    paused,
  });
  orphans.start();
  teardown.add('orphan check', () => orphans.stop());
  const reconcile = setInterval(() => {
    engine.reconcile().catch((err) => quietLog.error('reconcile failed', { err }));
  }, heartbeatMs);
  reconcile.unref();
  teardown.add('reconcile', () => clearInterval(reconcile));
  return orphans;
}

export interface ExecutorListener {
  transport: TransportName;
  port: number;
  /** Stops taking sockets (once; the sockets open stay until the engine closes them). */
  close(): void;
}

/** The OTP listener executors connect to (OTP_TRANSPORT, or what loaded). */
export async function listenForExecutors(
  config: Config,
  database: Database,
  parts: { engine: OtpEngine; principals: Principals; metrics: ServiceMetrics; log: Logger },
  teardown: Teardown,
): Promise<ExecutorListener> {
  const { engine, principals, metrics, log } = parts;
  const { transport: ws, reason } = createOtpTransport(config.otp.transport, {
    engine,
    authenticate: (credential) => principals.resolve(credential, { activeOnly: true }),
    log: database.quietLog,
    maxFrameBytes: config.otp.maxFrameBytes,
    refused: () => metrics.refusedConnection(),
    unavailable: (err) => database.health.report(err),
    retryAfterMs: config.otp.helloRetryMs,
  });
  let open = true;
  const close = () => {
    if (open) ws.close();
    open = false;
  };
  const port = await ws.listen(config.host, config.wsPort);
  teardown.add('OTP listener', close);
  log.info('OTP transport', { transport: ws.name, reason });
  metrics.transport(ws.name);
  return { transport: ws.name, port, close };
}
