// GET /ai/flaky as a plain function: the window's case outcomes from run history, ranked by the rules
// of score.ts, each with its live quarantine.
import type { Principal } from '../../auth/principal.js';
import { AI_COSTS } from '../../tiers.js';
import type { AiMeter } from '../meter.js';
import type { RunHistory } from '../run-history.js';
import type { Quarantine, QuarantineStore } from './quarantine-store.js';
import type { FlakyQuery } from './schema.js';
import { type CaseFlakiness, FLAKY_RULES, type FlakyStatus, rankFlakiness } from './score.js';

export interface FlakyFilter {
  runs: number;
  status?: FlakyStatus;
  testCaseId?: string;
  limit: number;
}

export type FlakyCase = CaseFlakiness & { quarantine: Quarantine | null };

export async function listFlaky(
  history: RunHistory,
  quarantines: QuarantineStore,
  projectId: string,
  filter: FlakyFilter,
) {
  const [attempts, live] = await Promise.all([
    history.caseAttempts(projectId, {
      runs: filter.runs,
      ...(filter.testCaseId ? { testCaseId: filter.testCaseId } : {}),
    }),
    quarantines.live(projectId),
  ]);
  const byCase = new Map(live.map((q) => [q.testCaseId, q]));
  const items: FlakyCase[] = rankFlakiness(attempts)
    .filter((c) => !filter.status || c.status === filter.status)
    .slice(0, filter.limit)
    .map((c) => ({ ...c, quarantine: byCase.get(c.testCaseId) ?? null }));
  return { items, window: { runs: filter.runs }, rules: { ...FLAKY_RULES } };
}

/**
 * GET /ai/flaky and svc_list_flaky: charged as one answer from history. The answer only reads, so
 * the charge and the reads go together; a refused charge (402) is what is answered, and nothing was
 * written either way.
 */
export async function listFlakyCharged(
  deps: { history: RunHistory; quarantines: QuarantineStore; meter: AiMeter },
  principal: Principal,
  query: Partial<FlakyQuery>,
) {
  const charged = deps.meter.charge(principal.projectId, 'flaky', AI_COSTS.history);
  const listed = listFlaky(deps.history, deps.quarantines, principal.projectId, {
    runs: query.runs ?? 300,
    limit: query.limit ?? 50,
    ...(query.status ? { status: query.status } : {}),
    ...(query.testCaseId ? { testCaseId: query.testCaseId } : {}),
  });
  // Both settle before the answer: a failed read is not left unhandled behind a refused charge.
  const [charge, list] = await Promise.allSettled([charged, listed]);
  if (charge.status === 'rejected') throw charge.reason;
  if (list.status === 'rejected') throw list.reason;
  return list.value;
}
