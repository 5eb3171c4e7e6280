// Tiers and their numbers, in one place. A tenant's `tier` column names one of these.
export interface TierLimits {
  /** Bytes of assets a project may keep (all buckets together). */
  storageBytes: number;
  /** Artifacts (bugs, tickets, test cases, ...) a project may hold. */
  artifacts: number;
  /** REST requests per minute per API key. */
  requestsPerMinute: number;
  /** AI calls a tenant may make per calendar month (UTC); a model-backed call costs AI_COSTS.model. */
  aiCallsPerMonth: number;
}

/** What one ai/* call costs against the monthly allowance: a language model's answer costs more. */
export const AI_COSTS = { history: 1, model: 10 } as const;

export const TIERS = {
  free: { storageBytes: 1 * 1024 ** 3, artifacts: 10_000, requestsPerMinute: 600, aiCallsPerMonth: 200 },
  pro: { storageBytes: 100 * 1024 ** 3, artifacts: 1_000_000, requestsPerMinute: 6_000, aiCallsPerMonth: 10_000 },
  enterprise: {
    storageBytes: 10 * 1024 ** 4,
    artifacts: 100_000_000,
    requestsPerMinute: 60_000,
    aiCallsPerMonth: 1_000_000,
  },
} satisfies Record<string, TierLimits>;

export type TierName = keyof typeof TIERS;

export function tierLimits(tier: string | undefined): TierLimits {
  return TIERS[tier as TierName] ?? TIERS.free;
}

/** The limits that apply: the tier's, with any install-wide override from the config. */
export function effectiveLimits(
  tier: string | undefined,
  overrides: { requestsPerMinute?: number; artifacts?: number; aiCallsPerMonth?: number } = {},
): TierLimits {
  const limits = tierLimits(tier);
  return {
    storageBytes: limits.storageBytes,
    artifacts: overrides.artifacts ?? limits.artifacts,
    requestsPerMinute: overrides.requestsPerMinute ?? limits.requestsPerMinute,
    aiCallsPerMonth: overrides.aiCallsPerMonth ?? limits.aiCallsPerMonth,
  };
}

/** Where a 402 sends people. */
export const UPGRADE_URL = 'https://example.invalid/billing/upgrade';
