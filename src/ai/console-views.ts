// What the console shows of the ai group (its ConsoleData members, wired in src/service.ts): a test
// case's history (its last runs, flakiness, quarantine and healing proposals) and the healing review.
// The console is a person's view: reading it is not charged to the AI allowance (docs/ai.md).
import type { Principal } from '../auth/principal.js';
import type { QuarantineStore } from './flaky/quarantine-store.js';
import { caseRuns, flakinessOf } from './flaky/score.js';
import type { HealingService } from './healing/healing-service.js';
import type { HealingStatus } from './healing/healing-store.js';
import type { RunHistory } from './run-history.js';

export function consoleViews(history: RunHistory, quarantines: QuarantineStore, healing: HealingService) {
  return {
    async caseHistory(principal: Principal, testCaseId: string) {
      const [attempts, live] = await Promise.all([
        history.caseAttempts(principal.projectId, { runs: 200, testCaseId }),
        quarantines.live(principal.projectId),
      ]);
      const runs = caseRuns(attempts).get(testCaseId);
      const proposals = [
        ...(await healing.list(principal, { status: 'proposed', testCaseId, limit: 20 })),
        ...(await healing.list(principal, { status: 'accepted', testCaseId, limit: 20 }, false)),
        ...(await healing.list(principal, { status: 'rejected', testCaseId, limit: 20 }, false)),
      ];
      return {
        flakiness: runs ? flakinessOf(testCaseId, runs) : null,
        quarantine: live.find((q) => q.testCaseId === testCaseId) ?? null,
        proposals,
      };
    },
    healingProposals: (principal: Principal, status: HealingStatus) => healing.list(principal, { status, limit: 100 }),
    decideHealing: (principal: Principal, id: string, decision: 'accept' | 'reject', reason?: string) =>
      decision === 'accept' ? healing.accept(principal, id) : healing.reject(principal, id, reason),
    quarantine: (principal: Principal, testCaseId: string, on: boolean) =>
      on
        ? quarantines.quarantine(principal, testCaseId, { reason: 'quarantined from the console' })
        : quarantines.release(principal, testCaseId),
  };
}
