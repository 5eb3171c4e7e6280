// The composition root: builds config-driven parts (database, engine, listeners) and tears them down.

import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHistoryAnswers } from './ai/history-answers.js';
import { createAi } from './ai/index.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { createArtifacts } from './artifacts/index.js';
import { createAssets } from './assets/index.js';
import { type BootstrapResult, bootstrapAdminKey } from './auth/bootstrap.js';
import { KeyCache, keyIdsOfProject, principalOfKeyId } from './auth/keys.js';
import { Principals } from './auth/principals.js';
import { TokenVerifier } from './auth/tokens.js';
import type { Config } from './config.js';
import { createConsole } from './console/server.js';
import { createDb, type Db, migrate } from './db/connect.js';
import { DedicatedConnection } from './db/dedicated-connection.js';
import { type EmbeddedServer, startEmbeddedPostgres } from './db/embedded.js';
import { DatabaseHealth } from './db/health.js';
import { Notifier } from './db/notifier.js';
import { consoleDataOf, mcpBackendOf } from './doors.js';
import { newId } from './ids.js';
import { Lifecycle } from './lifecycle.js';
import { createLogger, type Logger } from './log.js';
import { mcpOpenApiPaths } from './mcp/openapi-paths.js';
import { mcpMiddleware } from './mcp/server.js';
import { cookieKeys, OAuthServer } from './oauth/index.js';
import { oauthOpenApiPaths } from './oauth/openapi-paths.js';
import { Revocations } from './oauth/revocations.js';
import { SigningKeys } from './oauth/signing-keys.js';
import { ServiceMetrics } from './observability/metrics.js';
import { listenForMetrics } from './observability/server.js';
import { OtpEngine } from './otp/engine/engine.js';
import { InstanceRegistry } from './otp/engine/instances.js';
import { OrphanCheck } from './otp/engine/orphans.js';
import { recordingRoutes } from './otp/http/recording-routes.js';
import { otpRoutes } from './otp/http/routes.js';
import { runCommands } from './otp/runs/commands.js';
import { RunFailureFacts } from './otp/store/failure-facts.js';
import { InstanceStore } from './otp/store/instance-store.js';
import { RecordingStore } from './otp/store/recording-store.js';
import { RunFacts } from './otp/store/run-facts.js';
import { RunHistoryStore } from './otp/store/run-history.js';
import { RunResultsStore } from './otp/store/run-results-store.js';
import { RunStore, type RunStoreConnections } from './otp/store/run-store.js';
import { RunTraceStore } from './otp/store/run-trace.js';
import { RunViewCache } from './otp/store/run-view-cache.js';
import { RunViews } from './otp/store/run-views.js';
import { SessionHandOverStore } from './otp/store/session-handover.js';
import { createOtpTransport, type TransportName } from './otp/transport/index.js';
import { ProjectSettings, platformRoutes } from './platform/routes.js';
import { tenancy } from './platform/tenancy.js';
import { createRestApp } from './rest/app.js';
import { readiness } from './rest/health.js';
import { IdempotencyStore } from './rest/idempotency.js';
import { RateCounter } from './rest/middleware/rate-limit.js';
import { answerClientError } from './rest/middleware/storable-text.js';
import { Api } from './rest/route.js';
import { effectiveLimits } from './tiers.js';
import { createWebhookDelivery } from './webhook-delivery/index.js';

const API_DESCRIPTION = [
  'REST API of the service: software-project artifacts (bugs, tickets, requirements, specifications, tests, releases, knowledge), OTP test runs and assets. Paths carry /api/v1.',
  '',
  '- Authentication: `Authorization: Bearer <API key>`; a key belongs to one tenant and project and has the scope read, write or admin. Another project\'s id is a 404. An OAuth 2.1 access token (a JWT from /oauth/token) works wherever a key does, as the key that vouched for it.',
  '- Agents: MCP over Streamable HTTP at /mcp (tools svc_otp_run, svc_otp_status, ...), with an API key or an access token; OAuth discovery at /.well-known/oauth-protected-resource/mcp.',
  '- Errors: every non-2xx answer is `{ "error": { "code", "message", "details" } }`; VALIDATION_ERROR lists each failing field in details.fields.',
  '- Lists: `{ items, nextCursor }`, paged by `limit` and `cursor`, in a stable order (`sort`), with filters on the fields people filter by and `updatedSince`.',
  '- Records carry `version`; reads answer it as ETag, and a write with If-Match applies only to that revision (412 otherwise).',
  '- POST accepts Idempotency-Key: a retry gets the first answer, never a second record.',
  '- Limits: requests per minute per API key (429 RATE_LIMITED with Retry-After and RateLimit headers), artifacts per project by tier (402 QUOTA_EXCEEDED with upgradeUrl).',
  '- OTP executors connect over WebSocket at {ws_url}/otp; see GET /api/v1/otp/protocol.',
].join('\n');

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

export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Service> {
  let embedded: EmbeddedServer | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir, { port: config.embeddedPgPort, log: (line) => log.info(line) });
    databaseUrl = embedded.url;
    log.info('embedded PostgreSQL started', { dataDir: config.dataDir });
  }
  const db = createDb(databaseUrl, {}, log);
  // Rate-limit counts: a small pool whose commits do not wait for the disk.
  const countersDb = createDb(databaseUrl, { max: 2, asyncCommit: true }, log);
  await migrate(db);
  const bootstrap = await bootstrapAdminKey(db, tenancy, config);

  const instanceId = newId('ins');
  const lifecycle = new Lifecycle();
  // Reads the engine lazily: the engine is built below, with the metrics' port.
  const health = readiness({ probe: () => db.raw('SELECT 1'), draining: () => lifecycle.draining });
  // An outage of PostgreSQL is spoken of once (a line as it begins, one as it ends); runs hold
  // meanwhile. What the engine and the background work log goes through `quietLog`, which leaves
  // outages to it.
  const dbHealth = new DatabaseHealth(() => db.raw('SELECT 1'), log);
  const quietLog = dbHealth.quiet(log);
  // Peers cannot heart-beat during an outage: judge none silent until they have had time to after it.
  const sweepsPaused = () => !dbHealth.available || dbHealth.recentlyRecovered(2 * config.heartbeatMs + 1_000);
  // Reads the engine lazily: the engine is built below, with the metrics' port.
  const metrics = new ServiceMetrics({ activeRuns: () => engine.activeRuns, database: () => dbHealth.stats() });
  // The engine's hot statements on connections of their own: the group commit of step results (one
  // statement in flight at a time), the claims and inserts of runs, and the group commit of their
  // verdicts (so that a claim or an insert never waits behind the finishes). The two group commits
  // are planned for each batch's own length (see dedicated-connection.ts).
  const runConnections: RunStoreConnections = {
    steps: new DedicatedConnection(databaseUrl, `otp-steps ${instanceId}`, (err) => quietLog.error('step-result connection failed', { err }), { customPlans: true }),
    runs: new DedicatedConnection(databaseUrl, `otp-runs ${instanceId}`, (err) => quietLog.error('run connection failed', { err })),
    finishes: new DedicatedConnection(databaseUrl, `otp-finishes ${instanceId}`, (err) => quietLog.error('verdict connection failed', { err }), { customPlans: true }),
  };
  // Webhook delivery: the outbox every store reports its changes to, in the changes' transactions.
  const webhooks = createWebhookDelivery({ config: config.webhooks, db, log: quietLog, instanceId });
  const store = new RunStore(db, runConnections, webhooks.events);
  const notifier = new Notifier(db, databaseUrl, instanceId, quietLog);
  const runViews = new RunViewCache(config.runViewCacheBytes);
  // The ports between rooms: assets and the artifacts room read OTP runs through the OTP store, the
  // planner reads test cases through the artifacts room, the engine reads a project's keys through auth.
  const assets = await createAssets({ config, db, log: quietLog, evidenceChanged: (runId) => runViews.invalidate(runId), runs: new RunFacts(db), tenants: tenancy });
  const projectSettings = new ProjectSettings(db);
  const artifacts = await createArtifacts({
    config, db, log: quietLog, runResults: new RunResultsStore(db), events: webhooks.events,
    // Readiness is judged with the project's thresholds, kept by the platform room.
    readinessThresholds: projectSettings,
  });
  const views = new RunViews(db);
  // The service's HTTP base address, known once the REST listener is bound (its port may be 0): the
  // OAuth issuer and audience derive from it, MCP links start with it, welcome.apiUrl tells executors.
  let baseUrl = config.publicUrl ?? '';
  let otpPort = 0; // the bound OTP port (WS_PORT may be 0), for GET /otp/protocol's otpUrl
  const instanceStore = new InstanceStore(db, store);
  const engine = new OtpEngine({
    store,
    views,
    testCaseSink: artifacts.testCaseSink,
    recordingStore: new RecordingStore(db, webhooks.events),
    projectKeyIds: (projectId) => keyIdsOfProject(db, projectId),
    notifier,
    traces: new RunTraceStore(db),
    handOverStore: new SessionHandOverStore(db),
    // Processes that heart-beat lately can take over the sessions of a draining one.
    livePeers: () => instanceStore.livePeerCount(instanceId, Math.min(config.instanceTimeoutMs, 3 * config.heartbeatMs)),
    config,
    apiUrl: () => baseUrl,
    instanceId,
    log: quietLog,
    health: dbHealth,
    events: metrics.engine,
    runHooks: { verifyEvidence: assets.verifyEvidence, onFinished: artifacts.onRunFinished },
  });
  // The ai/* group (docs/ai.md): flakiness, quarantine, healing, model drafts and the AI quota, read
  // from run history; then failures, triage and bug drafts, charged through the same quota.
  const aiHistory = createHistoryAnswers({
    db,
    config,
    history: new RunHistoryStore(db),
    tenants: { tenantOf: (projectId) => tenancy.tenantOfProject(db, projectId) },
    events: webhooks.events,
    ...artifacts.aiPorts,
  });
  // The run commands every door calls: REST, MCP and the console (src/otp/runs).
  const runs = runCommands({ engine, store, views, cache: runViews, testCases: artifacts.testCases, quarantine: aiHistory.quarantines, limits: config.otp });
  // Failures are signed after each verdict, off the step path.
  const ai = createAi({
    db, log: quietLog, meter: aiHistory.meter, facts: new RunFailureFacts(db), events: webhooks.events, sweepMs: config.heartbeatMs, link: artifacts.link,
    reader: { run: (principal, runId) => runs.read(principal, runId), session: (projectId, sessionId) => views.session(projectId, sessionId) },
    stores: { bug: artifacts.stores.get('bug')!, testResult: artifacts.stores.get('test_result')!, testCase: artifacts.stores.get('test_case')! },
    absolute: (path) => `${baseUrl}${path}`,
  });
  const keys = new KeyCache(db, tenancy, { ttlMs: config.keyCacheMs, maxEntries: 10_000 });
  // OAuth access tokens: signed with keys kept in PostgreSQL, accepted wherever a key is. The issuer
  // and the audience are known once the REST listener is bound (they may be derived from its port).
  const signingKeys = new SigningKeys(db);
  await signingKeys.ensure();
  const revocations = new Revocations(db);
  const issuer = () => `${baseUrl}/oauth`;
  const audience = () => `${baseUrl}/`;
  const tokens = new TokenVerifier({
    issuer,
    audience,
    keys: signingKeys,
    revocations,
    principalOfKeyId: (keyId) => principalOfKeyId(db, tenancy, keyId),
    keyCacheMs: config.keyCacheMs,
  });
  signingKeys.onRetired(() => tokens.forgetKeys());
  const principals = new Principals(keys, tokens);
  const oauth = new OAuthServer({
    db,
    log: quietLog,
    signingKeys,
    revocations,
    ttl: { accessTokenSec: config.oauth.accessTokenTtlSec, refreshTokenSec: config.oauth.refreshTokenTtlSec },
    keysRefreshMs: config.oauth.keysRefreshMs,
    principalOfKeyId: (keyId) => principalOfKeyId(db, tenancy, keyId),
    authenticateKey: async (secret) => keys.authenticate(secret),
    verifiedClaims: (token) => tokens.claims(token),
  });
  const oauthCookieKeys = await cookieKeys(db);
  // The console reads through the same functions and stores as the REST routes (src/console/data.ts).
  const consoleData = consoleDataOf({ runs, views, engine, artifacts, assets, ai, aiHistory });
  const s3 = config.storage.s3;
  const webConsole = await createConsole({
    data: consoleData,
    imageOrigins: s3 ? [s3.publicEndpoint ?? s3.endpoint ?? `https://${s3.bucket}.s3.${s3.region}.amazonaws.com`].map((u) => new URL(u).origin) : [],
  });
  await notifier.listen(
    (notice) => {
      webConsole.live.notice(notice);
      if (notice.kind === 'revoke') keys.invalidate(notice.keyId);
      if (notice.kind === 'project') keys.invalidateProject(notice.projectId);
      if (notice.kind === 'run-view') runViews.invalidate(notice.runId);
      if (notice.kind === 'run-live') ai.runChanged(notice.runId, notice.status);
      if (notice.kind === 'webhooks') webhooks.wake();
      if (notice.kind === 'webhook-subscriptions') webhooks.subscriptionsChanged(notice.projectId);
      engine.handleNotice(notice);
    },
    // Back after a lost connection: forget what a missed notice would have changed, and look now
    // for the runs and cancels a missed notice would have announced.
    () => {
      keys.clear();
      runViews.clear();
      webhooks.forgetSubscriptions();
      webhooks.wake();
      engine.reconcile().catch((err) => quietLog.error('reconcile failed', { err }));
    },
  );
  const instances = new InstanceRegistry(instanceStore, quietLog, instanceId, {
    heartbeatMs: config.heartbeatMs,
    timeoutMs: config.instanceTimeoutMs,
    paused: sweepsPaused,
  });
  await instances.start();
  const orphans = new OrphanCheck({
    instances: instanceStore,
    runs: store,
    instanceId,
    drives: (runId) => engine.drives(runId),
    log: quietLog,
    intervalMs: config.orphanCheckMs,
    paused: sweepsPaused,
  });
  orphans.start();
  const reconcileTimer = setInterval(() => {
    engine.reconcile().catch((err) => quietLog.error('reconcile failed', { err }));
  }, config.heartbeatMs);
  reconcileTimer.unref();

  const revokeKey = (keyId: string) => {
    keys.invalidate(keyId);
    return engine.revokeKey(keyId);
  };
  const api = new Api().add(
    ...platformRoutes({
      db,
      config,
      projectChanged: async (projectId, status) => {
        keys.invalidateProject(projectId);
        await notifier.notify({ kind: 'project', projectId });
        if (status !== 'active') await engine.closeProject(projectId, `project ${status}`);
      },
      artifactCount: artifacts.artifactCount,
      storageBytes: assets.storageBytes,
      settings: projectSettings,
    }),
    ...apiKeyRoutes({ db, onRevoked: revokeKey }),
    ...otpRoutes({ runs, config, views, otpPort: () => otpPort }),
    ...recordingRoutes({ recordings: engine.recordings }),
    ...assets.routes,
    ...artifacts.routes,
    ...webhooks.routes,
    ...ai.routes,
    ...aiHistory.routes,
  );
  // MCP tools call what the REST routes call: the run commands, the run views and the artifact stores.
  const mcpBackend = mcpBackendOf({ runs, views, artifacts, ai, aiHistory }, (path) => `${baseUrl}${path}`);
  const rateCounter = config.limits.rateLimit ? new RateCounter(countersDb, config.limits.rateLimitSyncMs) : undefined;
  const restApp = createRestApp({
    api,
    // Keys of an archived project still read over REST; OTP sessions need an active project.
    authenticate: (credential) => principals.resolve(credential),
    // An outage's 503s are the database's health to speak of (one line as it begins and ends).
    log: quietLog,
    rateLimit: rateCounter
      ? { counter: rateCounter, limitFor: (principal) => effectiveLimits(principal.tier, config.limits).requestsPerMinute }
      : undefined,
    idempotency: new IdempotencyStore(db, { ttlSec: config.limits.idempotencyTtlSec, staleSec: config.limits.idempotencyStaleSec }),
    health,
    slowRequestMs: config.slowRequestMs,
    observe: (sample) => metrics.request(sample),
    // The page README's first run drives with otp-runner (docs/demo/index.html).
    staticPages: { '/demo': await fs.readFile(new URL('../docs/demo/index.html', import.meta.url), 'utf8') },
    info: {
      title: 'OTP test protocol and artifact service',
      version: '1.0.0',
      description: API_DESCRIPTION,
    },
    cookieKeys: oauthCookieKeys,
    extraPaths: { ...oauthOpenApiPaths, ...mcpOpenApiPaths },
    mounts: {
      beforeAuth: [oauth.middleware()],
      afterBody: [mcpMiddleware({ backend: mcpBackend, log: quietLog, baseUrl: () => baseUrl, issuer, version: '1.0.0' })],
    },
    pages: webConsole.middleware,
  });
  const rest = http.createServer(restApp.callback());
  rest.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    rest.once('error', reject);
    rest.listen(config.port, config.host, () => resolve());
  });
  const restPort = (rest.address() as AddressInfo).port;
  const shownHost = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  baseUrl = config.publicUrl ?? `http://${shownHost}:${restPort}`;
  await oauth.start(issuer(), audience(), oauthCookieKeys);
  // Expired provider rows and revocations of tokens that expired anyway.
  const oauthSweep = setInterval(() => {
    revocations.sweep().catch((err) => log.error('OAuth sweep failed', { err }));
    signingKeys.retireExpired(config.oauth.accessTokenTtlSec).catch((err) => log.error('retiring signing keys failed', { err }));
  }, 60_000);
  oauthSweep.unref();
  const { transport: ws, reason: transportReason } = createOtpTransport(config.otp.transport, {
    engine,
    authenticate: (credential) => principals.resolve(credential, { activeOnly: true }),
    log: quietLog,
    maxFrameBytes: config.otp.maxFrameBytes,
    refused: () => metrics.refusedConnection(),
    unavailable: (err) => dbHealth.report(err),
    retryAfterMs: config.otp.helloRetryMs,
  });
  const wsPort = (otpPort = await ws.listen(config.host, config.wsPort));
  log.info('OTP transport', { transport: ws.name, reason: transportReason });
  metrics.transport(ws.name);
  webhooks.start();
  ai.start();
  const metricsListener =
    config.metricsPort === undefined ? undefined : await listenForMetrics(metrics, health, { host: config.metricsHost, port: config.metricsPort, log });

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      // Not ready from here on (/readyz answers 503). Drain (no new runs; runs in flight may finish;
      // then executors are told to resume elsewhere), stop taking sockets, wait for the hand-overs,
      // end the rest. REST serves until then.
      lifecycle.startDraining();
      const drained = engine.drain();
      clearInterval(oauthSweep);
      await orphans.stop();
      await drained;
      ws.close();
      await engine.shutdown();
      clearInterval(reconcileTimer);
      webConsole.close();
      await new Promise<void>((resolve) => {
        rest.close(() => resolve());
        rest.closeAllConnections();
      });
      await metricsListener?.close();
      metrics.close();
      await instances.stop();
      await ai.stop();
      dbHealth.stop();
      await webhooks.stop();
      await notifier.stop();
      await artifacts.stop();
      await assets.stop();
      await rateCounter?.close().catch((err) => log.error('last rate-limit sync failed', { err }));
      await countersDb.destroy();
      await runConnections.steps.end();
      await runConnections.runs.end();
      await runConnections.finishes?.end();
      await db.destroy();
      await embedded?.stop();
    })());

  return {
    config,
    db,
    engine,
    api,
    instanceId,
    bootstrap,
    oauth: { server: oauth, signingKeys, revocations, issuer: issuer(), audience: audience() },
    orphans,
    lifecycle,
    metrics,
    rateCounter,
    metricsUrl: metricsListener?.url,
    restUrl: `http://${shownHost}:${restPort}`,
    wsUrl: `ws://${shownHost}:${wsPort}`,
    transport: ws.name,
    stop,
  };
}
