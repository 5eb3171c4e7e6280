// The queue policy of each project (docs/queues.md), from its settings (platform/settings), kept a
// few seconds so that a claim does not read the settings each time: a change applies within that.

import { DEFAULT_POLICY, type QueuePolicy } from '../otp/queue/model.js';
import type { QueueSettings } from '../platform/settings/store.js';

const KEEP_MS = 5_000;

export class QueuePolicies {
  private readonly kept = new Map<string, { policy: Promise<QueuePolicy>; until: number }>();
  private settings?: (projectId: string) => Promise<QueueSettings>;

  /** Where the settings are read (known once the artifacts room is built); the defaults until then. */
  readFrom(settings: (projectId: string) => Promise<QueueSettings>): void {
    this.settings = settings;
  }

  readonly of = (projectId: string): QueuePolicy | Promise<QueuePolicy> => {
    if (!this.settings) return DEFAULT_POLICY;
    const now = Date.now();
    const held = this.kept.get(projectId);
    if (held && held.until > now) return held.policy;
    const policy = this.settings(projectId).then(policyOf, () => DEFAULT_POLICY);
    if (this.kept.size > 10_000) this.kept.clear();
    this.kept.set(projectId, { policy, until: now + KEEP_MS });
    return policy;
  };
}

export function policyOf(settings: QueueSettings): QueuePolicy {
  const groupWeights: Record<string, number> = {};
  const maxInFlight: Record<string, number> = {};
  for (const [group, { weight, maxInFlight: limit }] of Object.entries(settings.groups)) {
    if (weight !== undefined) groupWeights[group] = weight;
    if (limit !== undefined) maxInFlight[group] = limit;
  }
  const ownerWeights = Object.fromEntries(
    Object.entries(settings.owners).map(([owner, { weight }]) => [owner, weight]),
  );
  return {
    groupWeights,
    ownerWeights,
    maxInFlight,
    batchToNormalMs: Math.round(settings.batchToNormalMinutes * 60_000),
    normalToGateMs: Math.round(settings.normalToGateMinutes * 60_000),
    gateCap: settings.gateCap,
  };
}
