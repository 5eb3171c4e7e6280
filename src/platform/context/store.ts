// The entitlement of a key: read fresh at each request, since the tier and the usage move while a
// key's cached principal (src/auth/keys.ts, KeyCache) may be a few seconds old.

import type { Principal } from '../../auth/principal.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { currentCount } from '../../rest/middleware/rate-limit.js';
import { effectiveLimits, UPGRADE_URL } from '../../tiers.js';

export interface EntitlementDeps {
  db: Db;
  /** Limits set by configuration, over those of every tier. */
  limits: Config['limits'];
  /** Artifacts the project holds, as the artifacts room counts them for the quota. */
  artifactCount(projectId: string): Promise<number>;
  /** Bytes of assets a project keeps, when asset storage can tell. */
  storageBytes?(projectId: string): Promise<number>;
}

/**
 * `rateLimitCount` is this request's own place in the window as the rate limiter counted it (other
 * processes' requests show within its sync interval); without it, PostgreSQL's count is read.
 */
export async function entitlementOf(
  { db, limits, artifactCount, storageBytes }: EntitlementDeps,
  principal: Principal,
  rateLimitCount: number | undefined,
) {
  const artifacts = await artifactCount(principal.projectId);
  const bytes = storageBytes ? await storageBytes(principal.projectId) : undefined;
  const tenant = await db('tenants').where('id', principal.tenantId).first('tier');
  const tier = tenant?.tier ?? principal.tier ?? 'free';
  return {
    tenantId: principal.tenantId,
    projectId: principal.projectId,
    tier,
    limits: effectiveLimits(tier, limits),
    usage: {
      artifacts,
      requestsThisWindow: rateLimitCount ?? (await currentCount(db, principal.keyId)),
      ...(bytes !== undefined ? { storageBytes: bytes } : {}),
    },
    upgradeUrl: UPGRADE_URL,
  };
}
