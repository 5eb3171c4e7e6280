// The monthly allowance of AI calls (src/tiers.ts), as an AiMeter: a tenant's calls of one calendar
// month (UTC) are counted in one row of ai_usage, raised by a conditional upsert, so every process
// shares the count and a call past the allowance changes nothing (docs/ai.md, "Quota").
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { AI_COSTS, effectiveLimits, UPGRADE_URL } from '../../tiers.js';
import type { AiMeter } from '../meter.js';

/** The port onto the platform's tenants: a project's tenant and its tier (platform/tenancy.ts). */
export interface ProjectTenants {
  tenantOf(projectId: string): Promise<{ tenantId: string; tier?: string } | undefined>;
}

export interface AiUsage {
  tier: string;
  allowance: number;
  used: number;
  remaining: number;
  byOperation: Record<string, number>;
  periodStart: string;
  renewsAt: string;
  costs: typeof AI_COSTS;
  upgradeUrl: string;
}

// One statement: the first call of a month inserts the row, later ones add to it, and neither
// happens when the sum would pass the allowance (no row comes back).
const CHARGE_SQL = `
INSERT INTO ai_usage AS u (tenant_id, period_start, used, by_operation)
SELECT :tenantId, date_trunc('month', now() AT TIME ZONE 'UTC')::date, :cost::int, jsonb_build_object(:operation::text, :cost::int)
 WHERE :cost::int <= :allowance::int
ON CONFLICT (tenant_id, period_start) DO UPDATE
   SET used = u.used + EXCLUDED.used,
       by_operation = u.by_operation || jsonb_build_object(:operation::text, coalesce((u.by_operation->>:operation::text)::int, 0) + EXCLUDED.used),
       updated_at = now()
 WHERE u.used + EXCLUDED.used <= :allowance::int
RETURNING used`;

/** The first instant of the next calendar month (UTC): when the allowance renews. */
export function renewalOf(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

function periodStartOf(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** How long a project's tenant and tier are remembered (a tier change applies within this). */
const TENANT_TTL_MS = 5_000;

export class AiQuota implements AiMeter {
  private readonly tenantCache = new Map<string, { at: number; tenant: { tenantId: string; tier?: string } }>();

  constructor(
    private readonly db: Db,
    private readonly tenants: ProjectTenants,
    private readonly overrides: { aiCallsPerMonth?: number } = {},
  ) {}

  private async tenant(projectId: string): Promise<{ tenantId: string; tier: string; allowance: number }> {
    const cached = this.tenantCache.get(projectId);
    let tenant = cached && Date.now() - cached.at < TENANT_TTL_MS ? cached.tenant : undefined;
    if (!tenant) {
      tenant = await this.tenants.tenantOf(projectId);
      if (!tenant) throw errors.notFound('Project', projectId);
      if (this.tenantCache.size >= 10_000) this.tenantCache.clear();
      this.tenantCache.set(projectId, { at: Date.now(), tenant });
    }
    const tier = tenant.tier ?? 'free';
    return { tenantId: tenant.tenantId, tier, allowance: effectiveLimits(tier, this.overrides).aiCallsPerMonth };
  }

  async charge(projectId: string, operation: string, cost: number): Promise<void> {
    const { tenantId, tier, allowance } = await this.tenant(projectId);
    const result = await this.db.raw(CHARGE_SQL, { tenantId, cost, operation, allowance });
    if (result.rows.length) return;
    const usage = await this.usage(projectId);
    throw errors.aiQuotaExceeded(
      `The ${tier} tier allows ${allowance} AI calls a month; ${usage.used} are used and ${operation} costs ${cost}. The allowance renews at ${usage.renewsAt}`,
      { tier, allowance, used: usage.used, cost, operation, renewsAt: usage.renewsAt },
      UPGRADE_URL,
    );
  }

  async usage(projectId: string): Promise<AiUsage> {
    const { tenantId, tier, allowance } = await this.tenant(projectId);
    const now = new Date();
    const periodStart = periodStartOf(now);
    const row = await this.db('ai_usage')
      .where({ tenant_id: tenantId, period_start: periodStart.toISOString().slice(0, 10) })
      .first('used', 'by_operation');
    const used = row?.used ?? 0;
    return {
      tier,
      allowance,
      used,
      remaining: Math.max(0, allowance - used),
      byOperation: row?.by_operation ?? {},
      periodStart: periodStart.toISOString(),
      renewsAt: renewalOf(now).toISOString(),
      costs: AI_COSTS,
      upgradeUrl: UPGRADE_URL,
    };
  }
}
