// The composition root: builds config-driven parts (database, engine, listeners) and tears them down.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { createDb, migrate, type Db } from './db/connect.js';
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.js';
import { Notifier } from './db/notifier.js';
import { RunViewCache } from './otp/store/run-view-cache.js';
import { RunFacts } from './otp/store/run-facts.js';
import { RunViews } from './otp/store/run-views.js';
import { KeyCache, keyIdsOfProject } from './auth/keys.js';
import { RateCounter } from './rest/middleware/rate-limit.js';
import { bootstrapAdminKey, type BootstrapResult } from './auth/bootstrap.js';
import { newId } from './ids.js';
import { Api } from './rest/route.js';
import { createRestApp } from './rest/app.js';
import { RunStore } from './otp/store/run-store.js';
import { InstanceStore } from './otp/store/instance-store.js';
import { RunResultsStore } from './otp/store/run-results-store.js';
import { StepWriter } from './otp/engine/step-writer.js';
import { OtpEngine } from './otp/engine/engine.js';
import { InstanceRegistry } from './otp/engine/instances.js';
import { WsServer } from './otp/transport/ws-server.js';
import { otpRoutes } from './otp/http/routes.js';
import { apiKeyRoutes } from './api-keys/routes.js';
import { platformRoutes } from './platform/routes.js';
import { createAssets } from './assets/index.js';
import { createArtifacts } from './artifacts/index.js';
import { IdempotencyStore } from './rest/idempotency.js';
import { effectiveLimits } from './tiers.js';

const API_DESCRIPTION = [
  'REST API of the service: software-project artifacts (bugs, tickets, requirements, specifications, tests, releases, knowledge), OTP test runs and assets. Paths carry /api/v1.',
  '',
  '- Authentication: `Authorization: Bearer <API key>`; a key belongs to one tenant and project and has the scope read, write or admin. Another project\'s id is a 404.',
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
  /** Addresses actually bound (ports may have been 0). */
  restUrl: string;
  wsUrl: string;
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
  const db = createDb(databaseUrl);
  // Rate-limit counts: a small pool whose commits do not wait for the disk.
  const countersDb = createDb(databaseUrl, { max: 2, asyncCommit: true });
  await migrate(db);
  const bootstrap = await bootstrapAdminKey(db, config);

  const instanceId = newId('ins');
  // The group commit of step results: one statement in flight at a time, on a connection of its own.
  const stepsPool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  stepsPool.on('error', (err) => log.error('step-result connection failed', { err }));
  const store = new RunStore(db, stepsPool);
  const writer = new StepWriter(store);
  const notifier = new Notifier(db, databaseUrl, instanceId, log);
  const runViews = new RunViewCache(config.runViewCacheBytes);
  // The ports between rooms: assets and the artifacts room read OTP runs through the OTP store, the
  // planner reads test cases through the artifacts room, the engine reads a project's keys through auth.
  const assets = await createAssets({ config, db, log, evidenceChanged: (runId) => runViews.invalidate(runId), runs: new RunFacts(db) });
  const artifacts = await createArtifacts({ config, db, log, runResults: new RunResultsStore(db) });
  const views = new RunViews(db);
  const engine = new OtpEngine({
    store,
    views,
    writer,
    testCases: artifacts.testCases,
    projectKeyIds: (projectId) => keyIdsOfProject(db, projectId),
    notifier,
    config,
    instanceId,
    log,
    runHooks: { verifyEvidence: assets.verifyEvidence, onFinished: artifacts.onRunFinished },
  });
  const keys = new KeyCache(db, { ttlMs: config.keyCacheMs, maxEntries: 10_000 });
  await notifier.listen(
    (notice) => {
      if (notice.kind === 'revoke') keys.invalidate(notice.keyId);
      if (notice.kind === 'project') keys.invalidateProject(notice.projectId);
      if (notice.kind === 'run-view') runViews.invalidate(notice.runId);
      engine.handleNotice(notice);
    },
    // Back after a lost connection: forget what a missed notice would have changed, and look now
    // for the runs and cancels a missed notice would have announced.
    () => {
      keys.clear();
      runViews.clear();
      engine.reconcile().catch((err) => log.error('reconcile failed', { err }));
    },
  );
  const instances = new InstanceRegistry(new InstanceStore(db, store), log, instanceId, {
    heartbeatMs: config.heartbeatMs,
    timeoutMs: config.instanceTimeoutMs,
  });
  await instances.start();
  const reconcileTimer = setInterval(() => {
    engine.reconcile().catch((err) => log.error('reconcile failed', { err }));
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
    }),
    ...apiKeyRoutes({ db, onRevoked: revokeKey }),
    ...otpRoutes({ engine, config, views, runViews }),
    ...assets.routes,
    ...artifacts.routes,
  );
  const rateCounter = config.limits.rateLimit ? new RateCounter(countersDb, config.limits.rateLimitSyncMs) : undefined;
  const restApp = createRestApp({
    api,
    // Keys of an archived project still read over REST; OTP sessions need an active project.
    authenticate: (secret) => keys.authenticate(secret),
    log,
    rateLimit: rateCounter
      ? { counter: rateCounter, limitFor: (principal) => effectiveLimits(principal.tier, config.limits).requestsPerMinute }
      : undefined,
    idempotency: new IdempotencyStore(db, { ttlSec: config.limits.idempotencyTtlSec, staleSec: config.limits.idempotencyStaleSec }),
    info: {
      title: 'OTP test protocol and artifact service',
      version: '1.0.0',
      description: API_DESCRIPTION,
    },
  });
  const rest = http.createServer(restApp.callback());
  await new Promise<void>((resolve, reject) => {
    rest.once('error', reject);
    rest.listen(config.port, config.host, () => resolve());
  });
  const restPort = (rest.address() as AddressInfo).port;
  const ws = new WsServer({
    engine,
    authenticate: (secret) => keys.authenticate(secret, { activeOnly: true }),
    log,
    maxFrameBytes: config.otp.maxFrameBytes,
  });
  const wsPort = await ws.listen(config.host, config.wsPort);
  const shownHost = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      clearInterval(reconcileTimer);
      await engine.shutdown();
      ws.close();
      await new Promise<void>((resolve) => {
        rest.close(() => resolve());
        rest.closeAllConnections();
      });
      await instances.stop();
      await notifier.stop();
      await artifacts.stop();
      await assets.stop();
      await rateCounter?.close().catch((err) => log.error('last rate-limit sync failed', { err }));
      await countersDb.destroy();
      await stepsPool.end();
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
    restUrl: `http://${shownHost}:${restPort}`,
    wsUrl: `ws://${shownHost}:${wsPort}`,
    stop,
  };
}
