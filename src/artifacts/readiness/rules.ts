// The rules of release readiness (docs/releases.md), pure functions of the facts (facts.ts), the
// project's thresholds and the previous readiness. Every rule is always answered: passed, failed, or
// undefined when there is no data to judge it on yet; a failed rule blocks the release or puts it at
// risk (its effect), an undefined one changes nothing, except that a release with no result at all is
// at risk (nothing says it works).
import { isFailingOutcome, isPassingOutcome } from '../../../machines/case-outcome.js';
import type { ReleaseFacts } from './facts.js';

export type RuleStatus = 'passed' | 'failed' | 'undefined';

/**
 * A result passed when its status is a passing case outcome (machines/case-outcome.ts: `flaky` passed
 * on a retry; it counts as a pass here, and in the flaky rule).
 */
const isPass = (status: string) => isPassingOutcome(status);
/** A result did not pass when its status is a failing case outcome (failed, error), or blocked (by hand). */
const isNotPassing = (status: string) => isFailingOutcome(status) || status === 'blocked';
export type Verdict = 'ready' | 'at_risk' | 'blocked';

export interface ReadinessRecord {
  id: string;
  kind: string;
  title: string | null;
  /** Why it is listed: no_coverage, last_failed, never_ran, not_passed, open_bug, flaky, quarantined, new_failure, suspect. */
  reason: string;
  status?: string;
  severity?: string;
  testCaseId?: string;
  requirementId?: string;
  resultId?: string;
  linkId?: string;
}

export interface RuleResult {
  id: string;
  title: string;
  status: RuleStatus;
  /** What it does to the verdict: blocks or risks when failed; none when it passed or is undefined. */
  effect: 'blocks' | 'risks' | 'none';
  summary: string;
  /** The measured value and the threshold it was held against, for rules that have them. */
  measured?: number | null;
  threshold?: number | null;
  records: ReadinessRecord[];
}

/** What the project's settings say (platform/settings, readiness). */
export interface ReadinessThresholds {
  minPassRate: number;
  blockingPassRate: number;
  blockingBugSeverities: string[];
  atRiskBugSeverities: string[];
  maxFlakyCases: number;
}

export interface PreviousReadiness {
  verdict: Verdict;
  failingCaseIds: string[];
  computedAt: Date;
}

const OPEN_BUG = new Set(['open', 'in_progress']);
const DISMISSED_BUG = new Set(['wont_fix', 'duplicate']);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The cases whose latest result in the release failed (failed, error, blocked): the failures "new" compares. */
export function failingCases(facts: ReleaseFacts): string[] {
  return [...facts.latest.values()]
    .filter((r) => isNotPassing(r.status))
    .map((r) => r.testCaseId)
    .sort();
}

/** Whether a covers link is suspect: the requirement changed after the case last passed, and no one confirmed it since. */
export function isSuspect(
  changedAt: string | null,
  latest: { status: string; recordedAt: Date } | undefined,
  confirmedAt: Date | null,
): boolean {
  if (!changedAt || !latest || !isPass(latest.status)) return false;
  const changed = Date.parse(changedAt);
  return latest.recordedAt.getTime() < changed && !(confirmedAt && confirmedAt.getTime() >= changed);
}

export function evaluate(
  facts: ReleaseFacts,
  thresholds: ReadinessThresholds,
  previous: PreviousReadiness | null,
): RuleResult[] {
  const title = (id: string) => facts.cases.get(id)?.title ?? null;
  const coveringOf = new Map<string, string[]>();
  for (const link of facts.covers)
    coveringOf.set(link.requirementId, [...new Set([...(coveringOf.get(link.requirementId) ?? []), link.testCaseId])]);
  const rules: RuleResult[] = [];

  // 1. Every requirement planned for the release is covered by a test case.
  const uncovered = facts.requirements.filter((r) => !coveringOf.get(r.id)?.length);
  rules.push({
    id: 'requirements_covered',
    title: 'Planned requirements are covered',
    ...(facts.requirements.length === 0
      ? { status: 'undefined', effect: 'none', summary: 'No requirement is planned for this release' }
      : uncovered.length
        ? {
            status: 'failed',
            effect: 'blocks',
            summary: `${plural(uncovered.length, 'planned requirement')} of ${facts.requirements.length} no test case covers`,
          }
        : {
            status: 'passed',
            effect: 'none',
            summary: `All ${plural(facts.requirements.length, 'planned requirement')} are covered`,
          }),
    records: uncovered.map((r) => ({ id: r.id, kind: 'requirement', title: r.title, reason: 'no_coverage' })),
  });

  // 2. Their covering cases last passed in the release (a failure blocks; a case never run puts it at risk).
  const covered = facts.requirements.filter((r) => coveringOf.get(r.id)?.length);
  const requirementRecords: ReadinessRecord[] = [];
  for (const r of covered) {
    for (const caseId of coveringOf.get(r.id)!) {
      const latest = facts.latest.get(caseId);
      if (!latest)
        requirementRecords.push({
          id: r.id,
          kind: 'requirement',
          title: r.title,
          reason: 'never_ran',
          testCaseId: caseId,
        });
      else if (isNotPassing(latest.status))
        requirementRecords.push({
          id: r.id,
          kind: 'requirement',
          title: r.title,
          reason: 'last_failed',
          status: latest.status,
          testCaseId: caseId,
          resultId: latest.resultId,
        });
    }
  }
  const lastFailed = requirementRecords.some((r) => r.reason === 'last_failed');
  const unmet = new Set(requirementRecords.map((r) => r.id)).size;
  rules.push({
    id: 'requirements_passing',
    title: 'Covering cases of planned requirements last passed',
    ...(covered.length === 0
      ? { status: 'undefined', effect: 'none', summary: 'No planned requirement is covered yet' }
      : requirementRecords.length
        ? {
            status: 'failed',
            effect: lastFailed ? 'blocks' : 'risks',
            summary: `${plural(unmet, 'requirement')} of ${covered.length} with a covering case that ${lastFailed ? 'last failed' : 'never ran in this release'}`,
          }
        : {
            status: 'passed',
            effect: 'none',
            summary: `Every covering case of ${plural(covered.length, 'requirement')} last passed`,
          }),
    records: requirementRecords,
  });

  // 3. Pass rate of the latest result of each case of the release's plans and runs.
  const judged = facts.scopeCaseIds
    .map((id) => facts.latest.get(id))
    .filter((r) => r && (isPass(r.status) || isNotPassing(r.status)));
  const passed = judged.filter((r) => isPass(r!.status)).length;
  const rate = judged.length ? passed / judged.length : null;
  const notRun = facts.scopeCaseIds.filter((id) => !facts.latest.has(id));
  rules.push({
    id: 'pass_rate',
    title: 'Pass rate of the latest results',
    ...(rate === null
      ? {
          status: 'undefined',
          effect: 'none',
          summary: facts.scopeCaseIds.length
            ? `None of ${plural(facts.scopeCaseIds.length, 'case')} has a result yet`
            : 'The release has no plan or test run with cases',
        }
      : rate < thresholds.blockingPassRate
        ? {
            status: 'failed',
            effect: 'blocks',
            summary: `${pct(rate)} passed (${passed} of ${judged.length}), under the blocking ${pct(thresholds.blockingPassRate)}`,
          }
        : rate < thresholds.minPassRate
          ? {
              status: 'failed',
              effect: 'risks',
              summary: `${pct(rate)} passed (${passed} of ${judged.length}), under ${pct(thresholds.minPassRate)}`,
            }
          : { status: 'passed', effect: 'none', summary: `${pct(rate)} passed (${passed} of ${judged.length})` }),
    measured: rate,
    threshold: thresholds.minPassRate,
    records: [
      ...judged
        .filter((r) => !isPass(r!.status))
        .map((r) => ({
          id: r!.testCaseId,
          kind: 'test_case',
          title: title(r!.testCaseId),
          reason: 'not_passed',
          status: r!.status,
          resultId: r!.resultId,
        })),
      ...notRun.map((id) => ({ id, kind: 'test_case', title: title(id), reason: 'never_ran' })),
    ],
  });

  // 4. Open bugs found by the release's results, cases or runs, and not fixed in it.
  const counted = facts.bugs.filter(
    (b) =>
      OPEN_BUG.has(b.status) ||
      (!DISMISSED_BUG.has(b.status) && b.fixedIn.length > 0 && !b.fixedIn.includes(facts.release.id)),
  );
  const blocking = counted.filter((b) => thresholds.blockingBugSeverities.includes(b.severity));
  const risky = counted.filter((b) => thresholds.atRiskBugSeverities.includes(b.severity));
  const bySeverity = ['critical', 'major', 'minor', 'trivial']
    .map((s) => [s, counted.filter((b) => b.severity === s).length] as const)
    .filter(([, n]) => n);
  // Nothing has run, and no bug is counted: no test could have found one yet.
  const nothingToFindBugs = facts.latest.size === 0 && counted.length === 0;
  rules.push({
    id: 'open_bugs',
    title: "No open bug found by the release's tests",
    ...(nothingToFindBugs
      ? {
          status: 'undefined',
          effect: 'none',
          summary: 'No test of the release has a result yet, so none could have found a bug',
        }
      : blocking.length || risky.length
        ? {
            status: 'failed',
            effect: blocking.length ? 'blocks' : 'risks',
            summary: `Open: ${bySeverity.map(([s, n]) => `${n} ${s}`).join(', ')}`,
          }
        : {
            status: 'passed',
            effect: 'none',
            summary: counted.length
              ? `Open, below the thresholds: ${bySeverity.map(([s, n]) => `${n} ${s}`).join(', ')}`
              : 'No open bug found by its tests',
          }),
    records: counted.map((b) => ({
      id: b.id,
      kind: 'bug',
      title: b.title,
      reason: 'open_bug',
      status: b.status,
      severity: b.severity,
    })),
  });

  // 5. Flaky and quarantined cases: only judged where something reports them (a result marked flaky, a quarantined case).
  const flaky = facts.scopeCaseIds.filter((id) => {
    const r = facts.latest.get(id);
    return r && (r.status === 'flaky' || r.labels.includes('flaky'));
  });
  const quarantined = facts.scopeCaseIds.filter((id) => facts.cases.get(id)?.quarantined);
  const unstable = flaky.length + quarantined.length;
  rules.push({
    id: 'flaky_cases',
    title: 'Flaky and quarantined cases',
    ...(unstable === 0
      ? {
          status: 'undefined',
          effect: 'none',
          summary: 'No result or case of the release reports flakiness or quarantine',
        }
      : unstable > thresholds.maxFlakyCases
        ? {
            status: 'failed',
            effect: 'risks',
            summary: `${plural(flaky.length, 'flaky case')}, ${quarantined.length} quarantined (at most ${thresholds.maxFlakyCases})`,
          }
        : {
            status: 'passed',
            effect: 'none',
            summary: `${plural(flaky.length, 'flaky case')}, ${quarantined.length} quarantined (at most ${thresholds.maxFlakyCases})`,
          }),
    measured: unstable,
    threshold: thresholds.maxFlakyCases,
    records: [
      ...flaky.map((id) => ({
        id,
        kind: 'test_case',
        title: title(id),
        reason: 'flaky',
        resultId: facts.latest.get(id)!.resultId,
      })),
      ...quarantined.map((id) => ({ id, kind: 'test_case', title: title(id), reason: 'quarantined' })),
    ],
  });

  // 6. Failures new since the previous readiness.
  const failing = failingCases(facts);
  const fresh = previous ? failing.filter((id) => !previous.failingCaseIds.includes(id)) : [];
  rules.push({
    id: 'new_failures',
    title: 'No failure new since the previous readiness',
    ...(!previous
      ? { status: 'undefined', effect: 'none', summary: 'This is the first readiness of the release' }
      : fresh.length
        ? {
            status: 'failed',
            effect: 'risks',
            summary: `${plural(fresh.length, 'case')} failing since ${previous.computedAt.toISOString()}`,
          }
        : { status: 'passed', effect: 'none', summary: `No new failure since ${previous.computedAt.toISOString()}` }),
    records: fresh.map((id) => ({
      id,
      kind: 'test_case',
      title: title(id),
      reason: 'new_failure',
      status: facts.latest.get(id)!.status,
      resultId: facts.latest.get(id)!.resultId,
    })),
  });

  // 7. Suspect coverage: a requirement changed after its covering case last passed, and no one confirmed it.
  const changedAt = new Map(facts.requirements.map((r) => [r.id, r.contentChangedAt]));
  const suspect = facts.covers.filter((l) =>
    isSuspect(changedAt.get(l.requirementId) ?? null, facts.latestAnywhere.get(l.testCaseId), l.confirmedAt),
  );
  const requirementTitle = new Map(facts.requirements.map((r) => [r.id, r.title]));
  rules.push({
    id: 'suspect_coverage',
    title: 'No suspect coverage',
    ...(facts.covers.length === 0
      ? { status: 'undefined', effect: 'none', summary: 'No planned requirement is covered yet' }
      : suspect.length
        ? {
            status: 'failed',
            effect: 'risks',
            summary: `${plural(suspect.length, 'covers link')} changed since the case last passed: run the case again or confirm the link`,
          }
        : {
            status: 'passed',
            effect: 'none',
            summary: `None of ${plural(facts.covers.length, 'covers link')} is suspect`,
          }),
    records: suspect.map((l) => ({
      id: l.requirementId,
      kind: 'requirement',
      title: requirementTitle.get(l.requirementId) ?? null,
      reason: 'suspect',
      testCaseId: l.testCaseId,
      linkId: l.linkId,
    })),
  });
  return rules;
}

export function verdictOf(rules: RuleResult[]): Verdict {
  if (rules.some((r) => r.status === 'failed' && r.effect === 'blocks')) return 'blocked';
  if (rules.some((r) => r.status === 'failed' && r.effect === 'risks')) return 'at_risk';
  // Nothing has run: nothing says the release works.
  if (rules.find((r) => r.id === 'pass_rate')?.status === 'undefined') return 'at_risk';
  return 'ready';
}

const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
