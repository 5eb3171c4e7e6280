// The composition root: builds config-driven parts (database, engine, listeners) and tears them down.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { createDb, migrate, type Db } from './db/connect.js';
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.js';
import { Notifier } from './db/notifier.js';
import { KeyCache } from './auth/keys.js';
import { bootstrapAdminKey, type BootstrapResult } from './auth/bootstrap.js';
import { newId } from './ids.js';
import { Api } from './rest/route.js';
import { createRestApp } from './rest/app.js';
import { RunStore } from './otp/run-store.js';
import { StepWriter } from './otp/step-writer.js';
import { OtpEngine } from './otp/engine.js';
import { InstanceRegistry } from './otp/instances.js';
import { WsServer } from './otp/ws-server.js';
import { otpRoutes } from './otp/routes.js';
import { apiKeyRoutes } from './resources/api-keys/routes.js';
import { platformRoutes } from './resources/platform/routes.js';
import { testCaseRoutes } from './resources/test-cases/routes.js';
import { testPlanRoutes } from './resources/test-plans/routes.js';
import { createAssets } from './assets/index.js';
import { createArtifacts } from './artifacts/index.js';

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
  await migrate(db);
  const bootstrap = await bootstrapAdminKey(db, config);

  const instanceId = newId('ins');
  const store = new RunStore(db);
  const writer = new StepWriter(store);
  const notifier = new Notifier(db, databaseUrl, instanceId, log);
  const assets = await createAssets({ config, db, log });
  const artifacts = await createArtifacts({ config, db, log });
  const engine = new OtpEngine({
    db,
    store,
    writer,
    notifier,
    config,
    instanceId,
    log,
    runHooks: { verifyEvidence: assets.verifyEvidence, onFinished: artifacts.onRunFinished },
  });
  const keys = new KeyCache(db, { ttlMs: config.keyCacheMs, maxEntries: 10_000 });
  await notifier.listen((notice) => {
    if (notice.kind === 'revoke') keys.invalidate(notice.keyId);
    engine.handleNotice(notice);
  });
  const instances = new InstanceRegistry(db, store, log, instanceId, {
    heartbeatMs: config.heartbeatMs,
    timeoutMs: config.instanceTimeoutMs,
  });
  await instances.start();
  const reconcileTimer = setInterval(() => {
    engine.reconcile().catch((err) => log.error('reconcile failed', { err }));
  }, config.heartbeatMs);
  reconcileTimer.unref();

  const auth = (secret: string) => keys.authenticate(secret);
  const api = new Api().add(
    ...platformRoutes(),
    ...apiKeyRoutes({
      db,
      onRevoked: (keyId) => {
        keys.invalidate(keyId);
        return engine.revokeKey(keyId);
      },
    }),
    ...testCaseRoutes({ db }),
    ...testPlanRoutes({ db }),
    ...otpRoutes({ db, engine, config }),
    ...assets.routes,
    ...artifacts.routes,
  );
  const rest = http.createServer(createRestApp({ api, authenticate: auth, log }).callback());
  await new Promise<void>((resolve, reject) => {
    rest.once('error', reject);
    rest.listen(config.port, config.host, () => resolve());
  });
  const restPort = (rest.address() as AddressInfo).port;
  const ws = new WsServer({ engine, authenticate: auth, log, maxFrameBytes: config.otp.maxFrameBytes });
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
      await assets.stop();
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
