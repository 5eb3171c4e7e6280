// GET /ai/flaky as a plain function: the window's case outcomes from run history, ranked by the rules
// of score.ts, each with its live quarantine.
import type { Principal } from '../../auth/principal.js';
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

/** GET /ai/flaky and svc_list_flaky, with the query's defaults (their charge is declared: charges.ts). */
export function listFlakyCases(
  deps: { history: RunHistory; quarantines: QuarantineStore },
  principal: Principal,
  query: Partial<FlakyQuery>,
) {
  return listFlaky(deps.history, deps.quarantines, principal.projectId, {
    runs: query.runs ?? 300,
    limit: query.limit ?? 50,
    ...(query.status ? { status: query.status } : {}),
    ...(query.testCaseId ? { testCaseId: query.testCaseId } : {}),
  });
}
