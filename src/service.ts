// The composition root: builds the service's parts from the config, room by room (src/composition/),
// and stops them. Each builder registers how its part stops as soon as it is up, on one Teardown,
// which stops them in the reverse order: on `stop` (after the drain) and when a start fails halfway.

import './composition/schema-order.js';
import type { BootstrapResult } from './auth/bootstrap.js';
import { failureAnswers, historyAnswers } from './composition/ai.js';
import { holdings, webhookDelivery } from './composition/artifacts.js';
import { credentials, startOAuth } from './composition/auth.js';
import { startDatabase } from './composition/database.js';
import { listenForExecutors, otpBackground, otpEngine, runStores } from './composition/otp.js';
import { QueuePolicies } from './composition/queue-policies.js';
import { listenForRest, restApi } from './composition/rest.js';
import { Teardown } from './composition/teardown.js';
import { listenForMetricsWhenAsked, serviceMetrics, webConsole } from './composition/web.js';
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import { newId } from './ids.js';
import { Lifecycle } from './lifecycle.js';
import { createLogger, type Logger } from './log.js';
import type { OAuthServer } from './oauth/index.js';
import type { Revocations } from './oauth/revocations.js';
import type { SigningKeys } from './oauth/signing-keys.js';
import type { ServiceMetrics } from './observability/metrics.js';
import type { OtpEngine } from './otp/engine/engine.js';
import type { OrphanCheck } from './otp/engine/orphans.js';
import { runCommands } from './otp/runs/commands.js';
import type { TransportName } from './otp/transport/index.js';
import { readiness } from './rest/health.js';
import type { RateCounter } from './rest/middleware/rate-limit.js';
import type { Api } from './rest/route.js';

export interface Service {
  config: Config;
  db: Db;
  engine: OtpEngine;
  api: Api;
  instanceId: string;
  bootstrap: BootstrapResult;
  /** OAuth: the signing keys (rotate, retire) and the issuer of access tokens. */
  oauth: { server: OAuthServer; signingKeys: SigningKeys; revocations: Revocations; issuer: string; audience: string };
  /** The periodic check for runs nobody drives (also callable at once). */
  orphans: OrphanCheck;
  /** Whether the process drains (/readyz answers 503 then); the SIGTERM drain sets it. */
  lifecycle: Lifecycle;
  metrics: ServiceMetrics;
  /** The per-key rate limit's counter (absent when the limit is off). */
  rateCounter?: RateCounter;
  /** The metrics listener's address, when METRICS_PORT is set. */
  metricsUrl?: string;
  /** Addresses actually bound (ports may have been 0). */
  restUrl: string;
  wsUrl: string;
  /** The adapter that carries OTP frames here (OTP_TRANSPORT, or what loaded). */
  transport: TransportName;
  stop(): Promise<void>;
}

/** Starts every part; a start that fails halfway stops what it had started, then fails. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Service> {
  const teardown = new Teardown(log);
  try {
    return await build(config, log, teardown);
  } catch (err) {
    await teardown.run();
    throw err;
  }
}

async function build(config: Config, log: Logger, teardown: Teardown): Promise<Service> {
  const instanceId = newId('ins');
  const lifecycle = new Lifecycle();
  const database = await startDatabase(config, log, instanceId, teardown);
  const { db, notifier } = database;
  const health = readiness({ probe: () => db.raw('SELECT 1'), draining: () => lifecycle.draining });
  // Reads the engine lazily: the engine is built below, with the metrics' port.
  const metrics = serviceMetrics(database.health, () => engine.activeRuns, teardown);
  // The service's HTTP base address, known once the REST listener is bound (its port may be 0): the
  // OAuth issuer and audience derive from it, MCP links start with it, welcome.apiUrl tells executors.
  let base = config.publicUrl ?? '';
  const baseUrl = () => base;
  const webhooks = webhookDelivery(config, database, instanceId, teardown);
  const { events } = webhooks;
  const queuePolicies = new QueuePolicies();
  const stores = runStores(config, database, instanceId, events, teardown, queuePolicies.of);
  const held = await holdings(config, database, { runViews: stores.runViews, webhooks }, teardown);
  queuePolicies.readFrom((projectId) => held.projectSettings.queueSettings(projectId));
  const { testCaseSink, onRunFinished: onFinished } = held.artifacts;
  const runHooks = { verifyEvidence: held.assets.verifyEvidence, onFinished };
  const engineParts = { config, database, stores, instanceId, events, testCaseSink, runHooks, metrics, baseUrl };
  const engine = otpEngine(engineParts, teardown);
  const aiHistory = historyAnswers(config, database, { events, holdings: held });
  // The run commands every door calls: REST, MCP and the console (src/otp/runs).
  const { store, views, runViews: cache } = stores;
  const { testCases } = held.artifacts;
  const quarantine = aiHistory.quarantines;
  const queuePolicy = queuePolicies.of;
  const runs = runCommands({ engine, store, views, cache, testCases, quarantine, limits: config.otp, queuePolicy });
  const absolute = (path: string) => `${base}${path}`;
  const ai = failureAnswers(config, database, { events, holdings: held, aiHistory, runs, views, absolute }, teardown);
  const auth = await credentials(config, database, baseUrl);
  const doors = { engine, runs, views, holdings: held, ai, aiHistory };
  const web = await webConsole(config, database, doors, teardown);
  // Every subscriber is in place: from now on the notices of other processes are heard.
  await notifier.listen();
  const orphans = await otpBackground(config, database, { stores, engine, instanceId }, teardown);
  let otpPort = 0; // bound below (WS_PORT may be 0); GET /otp/protocol tells it as otpUrl
  const apiParts = { ...doors, auth, webhooks, otpPort: () => otpPort };
  const api = restApi(config, database, apiParts);
  const restParts = { ...apiParts, api, health, metrics, webConsole: web, baseUrl };
  const rest = await listenForRest(config, database, restParts, teardown);
  const shownHost = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  base = config.publicUrl ?? `http://${shownHost}:${rest.port}`;
  await startOAuth(config, auth, log, teardown);
  const executorParts = { engine, principals: auth.principals, metrics, log };
  const executors = await listenForExecutors(config, database, executorParts, teardown);
  otpPort = executors.port;
  webhooks.start();
  ai.start();
  const metricsUrl = await listenForMetricsWhenAsked(config, { metrics, health, log }, teardown);

  let stopped: Promise<void> | undefined;
  // Not ready from here on (/readyz answers 503). Drain (no new runs; runs in flight may finish;
  // then executors are told to resume elsewhere), stop taking sockets, wait for the transfers, end
  // the rest: REST serves until then. Then every part stops, the last started first.
  const stop = () =>
    (stopped ??= (async () => {
      lifecycle.startDraining();
      await Promise.all([engine.drain(), orphans.stop()]);
      executors.close();
      await engine.shutdown();
      await teardown.run();
    })());

  const { signingKeys, revocations } = auth;
  return {
    config,
    db,
    engine,
    api,
    instanceId,
    bootstrap: database.bootstrap,
    oauth: { server: auth.oauth, signingKeys, revocations, issuer: auth.issuer(), audience: auth.audience() },
    orphans,
    lifecycle,
    metrics,
    rateCounter: rest.rateCounter,
    metricsUrl,
    restUrl: `http://${shownHost}:${rest.port}`,
    wsUrl: `ws://${shownHost}:${executors.port}`,
    transport: executors.transport,
    stop,
  };
}
