// The healing proposals' commands: look at history for new ones, list, accept (a new version of the
// test case with the candidate first and the old one kept after it) and reject.
import type { Principal } from '../../auth/principal.js';
import { errors } from '../../errors.js';
import type { RunHistory } from '../run-history.js';
import type { HealingProposal, HealingStatus, HealingStore } from './healing-store.js';
import { proposalsOf, sameLocator } from './rules.js';

/** The port onto test cases (the artifacts room's store of test_case): read one, write a new version. */
export interface TestCaseEditor {
  get(principal: Principal, id: string): Promise<Record<string, unknown>>;
  update(
    principal: Principal,
    id: string,
    patch: Record<string, unknown>,
    ifMatch: number[],
  ): Promise<Record<string, unknown>>;
}

type Step = { otp?: { locator?: { candidates?: unknown[] } } } & Record<string, unknown>;

export class HealingService {
  constructor(
    private readonly history: RunHistory,
    private readonly store: HealingStore,
    private readonly testCases: TestCaseEditor,
    private readonly windowRuns = 300,
  ) {}

  /** New proposals from the project's latest runs (those already kept or decided are left alone). */
  async scan(principal: Principal, testCaseId?: string): Promise<HealingProposal[]> {
    const steps = await this.history.locatorSteps(principal.projectId, {
      runs: this.windowRuns,
      ...(testCaseId ? { testCaseId } : {}),
    });
    return this.store.upsert(principal, proposalsOf(steps));
  }

  /** The proposals, after looking for new ones (`scan` false: as kept, for a second list of the same view). */
  async list(
    principal: Principal,
    filter: { status?: HealingStatus; testCaseId?: string; limit: number },
    scan = true,
  ): Promise<HealingProposal[]> {
    if (scan) await this.scan(principal, filter.testCaseId);
    return this.store.list(principal.projectId, filter);
  }

  /**
   * Writes the fix as a new version of the test case (If-Match on the version read, so a change in
   * between is a 412) and records who accepted it, when, and the version it made. Refused with 409
   * when the step's first candidate is no longer the old locator.
   */
  async accept(principal: Principal, id: string): Promise<HealingProposal> {
    const proposal = await this.store.get(principal.projectId, id);
    if (proposal.status !== 'proposed')
      throw errors.conflict(`Healing proposal ${id} is already ${proposal.status}`, { status: proposal.status });
    const testCase = await this.testCases.get(principal, proposal.testCaseId);
    const steps = (testCase.steps as Step[]).map((s) => structuredClone(s));
    const candidates = steps[proposal.stepPosition]?.otp?.locator?.candidates;
    if (!candidates?.length || !sameLocator(candidates[0], proposal.oldLocator)) {
      throw errors.conflict(
        `Step ${proposal.stepPosition + 1} of test case ${proposal.testCaseId} no longer starts with the old locator`,
        { stepPosition: proposal.stepPosition },
      );
    }
    const rest = candidates.filter((c) => !sameLocator(c, proposal.newLocator));
    steps[proposal.stepPosition]!.otp!.locator!.candidates = [proposal.newLocator, ...rest];
    const updated = await this.testCases.update(principal, proposal.testCaseId, { steps }, [
      testCase.version as number,
    ]);
    return this.store.decide(principal, id, { status: 'accepted', newVersion: updated.version as number });
  }

  reject(principal: Principal, id: string, reason?: string): Promise<HealingProposal> {
    return this.store.decide(principal, id, { status: 'rejected', ...(reason ? { reason } : {}) });
  }
}
