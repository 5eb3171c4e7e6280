// The database room as the service uses it: PostgreSQL (embedded when DATABASE_URL is not set), the
// pools, the migrations, the bootstrap admin key, the database's health (an outage is spoken of once)
// and the notices between processes.
import { type BootstrapResult, bootstrapAdminKey } from '../auth/bootstrap.js';
import type { Config } from '../config.js';
import { createDb, type Db, migrate } from '../db/connect.js';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { DatabaseHealth } from '../db/health.js';
import { Notifier } from '../db/notifier.js';
import type { Logger } from '../log.js';
import { tenancy } from '../platform/tenancy.js';
import type { Teardown } from './teardown.js';

export interface Database {
  url: string;
  db: Db;
  /** Rate-limit counts: a small pool whose commits do not wait for the disk. */
  countersDb: Db;
  bootstrap: BootstrapResult;
  health: DatabaseHealth;
  /**
   * The log of the engine and the background work: it leaves outages to `health`, which speaks of
   * one once (a line as it begins, one as it ends); runs hold meanwhile.
   */
  quietLog: Logger;
  notifier: Notifier;
}

export async function startDatabase(
  config: Config,
  log: Logger,
  instanceId: string,
  teardown: Teardown,
): Promise<Database> {
  let url = config.databaseUrl;
  if (!url) {
    const embedded = await startEmbeddedPostgres(config.dataDir, {
      port: config.embeddedPgPort,
      log: (line) => log.info(line),
    });
    teardown.add('embedded PostgreSQL', () => embedded.stop());
    url = embedded.url;
    log.info('embedded PostgreSQL started', { dataDir: config.dataDir });
  }
  const db = createDb(url, {}, log);
  teardown.add('database pool', () => db.destroy());
  const countersDb = createDb(url, { max: 2, asyncCommit: true }, log);
  teardown.add('rate-limit pool', () => countersDb.destroy());
  await migrate(db);
  const bootstrap = await bootstrapAdminKey(db, tenancy, config);
  const health = new DatabaseHealth(() => db.raw('SELECT 1'), log);
  teardown.add('database health', () => health.stop());
  const quietLog = health.quiet(log);
  const notifier = new Notifier(db, url, instanceId, quietLog);
  teardown.add('notices', () => notifier.stop());
  return { url, db, countersDb, bootstrap, health, quietLog, notifier };
}
