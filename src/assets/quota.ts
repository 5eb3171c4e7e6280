// Storage quota per project, sized by the tenant's tier (src/tiers.ts). Copies kept in `_deletion`
// do not count: they are the service's archive, not the project's files.
import type { Db } from '../db/connect.js';
import { tierLimits } from '../tiers.js';
import { DELETION_BUCKET } from './buckets/system.js';
import { assetErrors } from './errors.js';

export interface QuotaState {
  tier: string;
  quotaBytes: number;
  usedBytes: number;
}

/**
 * The tier of a tenant, read fresh (it may change while a key's principal is cached), in the caller's
 * transaction: the platform room owns tenants and implements this port (src/platform/tenancy.ts).
 */
export interface TenantTiers {
  tierOf(db: Db, tenantId: string): Promise<string | undefined>;
}

export class StorageQuota {
  constructor(
    private readonly db: Db,
    private readonly tiers: TenantTiers,
  ) {}

  async state(owner: { tenantId: string; projectId: string }, db: Db = this.db): Promise<QuotaState> {
    const tier = (await this.tiers.tierOf(db, owner.tenantId)) ?? 'free';
    return { tier, quotaBytes: tierLimits(tier).storageBytes, usedBytes: await this.usedBytes(owner.projectId, db) };
  }

  /** Bytes the project's assets take, its _deletion copies aside. */
  async usedBytes(projectId: string, db: Db = this.db): Promise<number> {
    const row = await db('assets as a')
      .join('asset_buckets as b', 'b.id', 'a.bucket_id')
      .where('a.project_id', projectId)
      .whereNot('b.name', DELETION_BUCKET)
      .first(db.raw('coalesce(sum(a.size), 0)::bigint as used'));
    return Number(row?.used ?? 0);
  }

  /** Bytes still free, never below zero. */
  static remaining(state: QuotaState): number {
    return Math.max(0, state.quotaBytes - state.usedBytes);
  }

  /**
   * Runs `write` in a transaction that holds the project's quota lock, after checking that `bytes`
   * more still fit; concurrent uploads of one project are so decided one after the other.
   */
  async withinQuota<T>(
    owner: { tenantId: string; projectId: string },
    bytes: number,
    write: (trx: Db) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`assets:quota:${owner.projectId}`]);
      const state = await this.state(owner, trx);
      if (state.usedBytes + bytes > state.quotaBytes) throw assetErrors.quotaExceeded({ ...state, uploadBytes: bytes });
      return write(trx);
    });
  }
}
