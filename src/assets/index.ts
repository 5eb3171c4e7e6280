// Asset storage: buckets, the fs and s3 drivers, signed and public downloads, OTP evidence.
// Builds the parts from config and hands the service its routes and the run engine its evidence check.

import type { StepOutcome } from '../../machines/types.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { RouteDef } from '../rest/route.js';
import { BucketService } from './buckets/bucket-service.js';
import { bucketRoutes } from './buckets/routes.js';
import { type EvidenceRuns, EvidenceService } from './evidence/evidence-service.js';
import { evidenceRoutes } from './evidence/routes.js';
import { AssetService } from './items/asset-service.js';
import { assetRoutes } from './items/routes.js';
import { StorageQuota, type TenantTiers } from './quota.js';
import { StorageDrivers } from './storage/drivers.js';

export interface Assets {
  routes: RouteDef[];
  /** Keeps only evidence references that name assets of this run; see RunDriverDeps.verifyEvidence. */
  verifyEvidence(runId: string, outcomes: StepOutcome[]): Promise<StepOutcome[]>;
  /** Bytes of assets a project keeps, as its storage quota counts them (for GET /platform/entitlement). */
  storageBytes(projectId: string): Promise<number>;
  /** Reads for the console (src/console), through the same services the asset routes use. */
  reads: {
    buckets: BucketService['list'];
    assets: AssetService['list'];
    signedUrl: AssetService['signedUrl'];
  };
  stop(): Promise<void>;
}

export interface AssetsDeps {
  config: Config;
  db: Db;
  log: Logger;
  /** Told in this process when a run's evidence files change; other processes hear it from the database. */
  evidenceChanged?: (runId: string) => void;
  /** The OTP runs evidence is uploaded for. */
  runs: EvidenceRuns;
  /** The tier of a tenant, which sizes its storage quota. */
  tenants: TenantTiers;
}

export async function createAssets({ config, db, log, evidenceChanged, runs, tenants }: AssetsDeps): Promise<Assets> {
  const drivers = await StorageDrivers.create(config, db, log);
  const buckets = new BucketService(db, drivers);
  const assets = new AssetService(db, config, buckets, drivers, new StorageQuota(db, tenants), log, evidenceChanged);
  const evidence = new EvidenceService(db, buckets, assets, runs);
  log.info('asset storage ready', { defaultDriver: drivers.defaultDriver, s3: Boolean(config.storage.s3) });
  return {
    routes: [...bucketRoutes(buckets), ...assetRoutes(assets, buckets), ...evidenceRoutes(evidence)],
    verifyEvidence: (runId, outcomes) => evidence.verify(runId, outcomes),
    storageBytes: (projectId) => assets.usedBytes(projectId),
    reads: {
      buckets: (owner, page) => buckets.list(owner, page),
      assets: (owner, bucketRef, page) => assets.list(owner, bucketRef, page),
      signedUrl: (owner, id, origin) => assets.signedUrl(owner, id, origin),
    },
    stop: async () => drivers.stop(),
  };
}
