// The rules of release readiness (docs/releases.md): a list of named rules (READINESS_RULES), each a
// pure function of the facts (facts.ts), the project's thresholds and the previous readiness. Every
// rule is always answered: passed, failed, or undefined when there is no data to judge it on yet; a
// failed rule blocks the release or puts it at risk (its effect), an undefined one changes nothing,
// except that a release with no result at all is at risk (nothing says it works). What a rule answers
// is the shape of the readiness schema (schema.ts), whose types these are.
import { isFailingOutcome, isPassingOutcome } from '../../../machines/case-outcome.js';
import type { ReleaseFacts } from './facts.js';
import type { ReleaseReadinessView } from './schema.js';

/**
 * A result passed when its status is a passing case outcome (machines/case-outcome.ts: `flaky` passed
 * on a retry; it counts as a pass here, and in the flaky rule).
 */
const isPass = (status: string) => isPassingOutcome(status);
/** A result did not pass when its status is a failing case outcome (failed, error), or blocked (by hand). */
const isNotPassing = (status: string) => isFailingOutcome(status) || status === 'blocked';
/** What each rule answers, and its records: the readiness schema's (schema.ts). */
export type RuleResult = ReleaseReadinessView['rules'][number];
export type RuleStatus = RuleResult['status'];
export type ReadinessRecord = RuleResult['records'][number];
export type Verdict = ReleaseReadinessView['verdict'];

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

/** What every rule reads: the facts, the thresholds, the previous readiness, and two lookups of the facts. */
interface RuleInput {
  facts: ReleaseFacts;
  thresholds: ReadinessThresholds;
  previous: PreviousReadiness | null;
  /** A test case's title, or null. */
  title(testCaseId: string): string | null;
  /** The cases covering each requirement. */
  coveringOf: ReadonlyMap<string, string[]>;
}

/** One rule of readiness, named for what it checks. */
export type ReadinessRule = (input: RuleInput) => RuleResult;

type Judgement = Pick<RuleResult, 'status' | 'effect' | 'summary'>;
const undecided = (summary: string): Judgement => ({ status: 'undefined', effect: 'none', summary });
const failed = (effect: 'blocks' | 'risks', summary: string): Judgement => ({ status: 'failed', effect, summary });
const passed = (summary: string): Judgement => ({ status: 'passed', effect: 'none', summary });

/** 1. Every requirement planned for the release is covered by a test case. */
export const requirementsCovered: ReadinessRule = ({ facts, coveringOf }) => {
  const uncovered = facts.requirements.filter((r) => !coveringOf.get(r.id)?.length);
  const planned = facts.requirements.length;
  return {
    id: 'requirements_covered',
    title: 'Planned requirements are covered',
    ...(planned === 0
      ? undecided('No requirement is planned for this release')
      : uncovered.length
        ? failed('blocks', `${plural(uncovered.length, 'planned requirement')} of ${planned} no test case covers`)
        : passed(`All ${plural(planned, 'planned requirement')} are covered`)),
    records: uncovered.map((r) => ({ id: r.id, kind: 'requirement', title: r.title, reason: 'no_coverage' })),
  };
};

/** The covered requirements whose covering cases never ran in the release or last failed there. */
function unmetRequirements({ facts, coveringOf }: RuleInput): ReadinessRecord[] {
  const records: ReadinessRecord[] = [];
  for (const r of facts.requirements) {
    for (const caseId of coveringOf.get(r.id) ?? []) {
      const latest = facts.latest.get(caseId);
      const requirement = { id: r.id, kind: 'requirement', title: r.title };
      if (!latest) records.push({ ...requirement, reason: 'never_ran', testCaseId: caseId });
      else if (isNotPassing(latest.status))
        records.push({
          ...requirement,
          reason: 'last_failed',
          status: latest.status,
          testCaseId: caseId,
          resultId: latest.resultId,
        });
    }
  }
  return records;
}

/** 2. Their covering cases last passed in the release (a failure blocks; a case never run puts it at risk). */
export const requirementsPassing: ReadinessRule = (input) => {
  const covered = input.facts.requirements.filter((r) => input.coveringOf.get(r.id)?.length);
  const records = unmetRequirements(input);
  const lastFailed = records.some((r) => r.reason === 'last_failed');
  const unmet = new Set(records.map((r) => r.id)).size;
  return {
    id: 'requirements_passing',
    title: 'Covering cases of planned requirements last passed',
    ...(covered.length === 0
      ? undecided('No planned requirement is covered yet')
      : records.length
        ? failed(
            lastFailed ? 'blocks' : 'risks',
            `${plural(unmet, 'requirement')} of ${covered.length} with a covering case that ${lastFailed ? 'last failed' : 'never ran in this release'}`,
          )
        : passed(`Every covering case of ${plural(covered.length, 'requirement')} last passed`)),
    records,
  };
};

/** 3. Pass rate of the latest result of each case of the release's plans and runs. */
export const passRate: ReadinessRule = ({ facts, thresholds, title }) => {
  const judged = facts.scopeCaseIds
    .map((id) => facts.latest.get(id))
    .filter((r) => r !== undefined && (isPass(r.status) || isNotPassing(r.status)))
    .map((r) => r!);
  const passes = judged.filter((r) => isPass(r.status)).length;
  const rate = judged.length ? passes / judged.length : null;
  const notRun = facts.scopeCaseIds.filter((id) => !facts.latest.has(id));
  const measured = `${pct(rate ?? 0)} passed (${passes} of ${judged.length})`;
  return {
    id: 'pass_rate',
    title: 'Pass rate of the latest results',
    ...(rate === null
      ? undecided(
          facts.scopeCaseIds.length
            ? `None of ${plural(facts.scopeCaseIds.length, 'case')} has a result yet`
            : 'The release has no plan or test run with cases',
        )
      : rate < thresholds.blockingPassRate
        ? failed('blocks', `${measured}, under the blocking ${pct(thresholds.blockingPassRate)}`)
        : rate < thresholds.minPassRate
          ? failed('risks', `${measured}, under ${pct(thresholds.minPassRate)}`)
          : passed(measured)),
    measured: rate,
    threshold: thresholds.minPassRate,
    records: [
      ...judged
        .filter((r) => !isPass(r.status))
        .map((r) => ({
          id: r.testCaseId,
          kind: 'test_case',
          title: title(r.testCaseId),
          reason: 'not_passed' as const,
          status: r.status,
          resultId: r.resultId,
        })),
      ...notRun.map((id) => ({ id, kind: 'test_case', title: title(id), reason: 'never_ran' as const })),
    ],
  };
};

/** The bugs the rule counts: open ones, and closed ones not fixed in this release (dismissed ones aside). */
function countedBugs(facts: ReleaseFacts): ReleaseFacts['bugs'] {
  return facts.bugs.filter(
    (b) =>
      OPEN_BUG.has(b.status) ||
      (!DISMISSED_BUG.has(b.status) && b.fixedIn.length > 0 && !b.fixedIn.includes(facts.release.id)),
  );
}

/** 4. Open bugs found by the release's results, cases or runs, and not fixed in it. */
export const openBugs: ReadinessRule = ({ facts, thresholds }) => {
  const counted = countedBugs(facts);
  const blocking = counted.filter((b) => thresholds.blockingBugSeverities.includes(b.severity));
  const risky = counted.filter((b) => thresholds.atRiskBugSeverities.includes(b.severity));
  const bySeverity = ['critical', 'major', 'minor', 'trivial']
    .map((s) => [s, counted.filter((b) => b.severity === s).length] as const)
    .filter(([, n]) => n)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  // Nothing has run, and no bug is counted: no test could have found one yet.
  const nothingToFindBugs = facts.latest.size === 0 && counted.length === 0;
  return {
    id: 'open_bugs',
    title: "No open bug found by the release's tests",
    ...(nothingToFindBugs
      ? undecided('No test of the release has a result yet, so none could have found a bug')
      : blocking.length || risky.length
        ? failed(blocking.length ? 'blocks' : 'risks', `Open: ${bySeverity}`)
        : passed(counted.length ? `Open, below the thresholds: ${bySeverity}` : 'No open bug found by its tests')),
    records: counted.map((b) => ({
      id: b.id,
      kind: 'bug',
      title: b.title,
      reason: 'open_bug',
      status: b.status,
      severity: b.severity,
    })),
  };
};

/** 5. Flaky and quarantined cases: only judged where something reports them (a result marked flaky, a quarantined case). */
export const flakyCases: ReadinessRule = ({ facts, thresholds, title }) => {
  const flaky = facts.scopeCaseIds.filter((id) => {
    const r = facts.latest.get(id);
    return r && (r.status === 'flaky' || r.labels.includes('flaky'));
  });
  const quarantined = facts.scopeCaseIds.filter((id) => facts.cases.get(id)?.quarantined);
  const unstable = flaky.length + quarantined.length;
  const counted = `${plural(flaky.length, 'flaky case')}, ${quarantined.length} quarantined (at most ${thresholds.maxFlakyCases})`;
  return {
    id: 'flaky_cases',
    title: 'Flaky and quarantined cases',
    ...(unstable === 0
      ? undecided('No result or case of the release reports flakiness or quarantine')
      : unstable > thresholds.maxFlakyCases
        ? failed('risks', counted)
        : passed(counted)),
    measured: unstable,
    threshold: thresholds.maxFlakyCases,
    records: [
      ...flaky.map((id) => ({
        id,
        kind: 'test_case',
        title: title(id),
        reason: 'flaky' as const,
        resultId: facts.latest.get(id)!.resultId,
      })),
      ...quarantined.map((id) => ({ id, kind: 'test_case', title: title(id), reason: 'quarantined' as const })),
    ],
  };
};

/** 6. Failures new since the previous readiness. */
export const newFailures: ReadinessRule = ({ facts, previous, title }) => {
  const fresh = previous ? failingCases(facts).filter((id) => !previous.failingCaseIds.includes(id)) : [];
  return {
    id: 'new_failures',
    title: 'No failure new since the previous readiness',
    ...(!previous
      ? undecided('This is the first readiness of the release')
      : fresh.length
        ? failed('risks', `${plural(fresh.length, 'case')} failing since ${previous.computedAt.toISOString()}`)
        : passed(`No new failure since ${previous.computedAt.toISOString()}`)),
    records: fresh.map((id) => ({
      id,
      kind: 'test_case',
      title: title(id),
      reason: 'new_failure',
      status: facts.latest.get(id)!.status,
      resultId: facts.latest.get(id)!.resultId,
    })),
  };
};

/** 7. Suspect coverage: a requirement changed after its covering case last passed, and no one confirmed it. */
export const suspectCoverage: ReadinessRule = ({ facts }) => {
  const changedAt = new Map(facts.requirements.map((r) => [r.id, r.contentChangedAt]));
  const suspect = facts.covers.filter((l) =>
    isSuspect(changedAt.get(l.requirementId) ?? null, facts.latestAnywhere.get(l.testCaseId), l.confirmedAt),
  );
  const requirementTitle = new Map(facts.requirements.map((r) => [r.id, r.title]));
  return {
    id: 'suspect_coverage',
    title: 'No suspect coverage',
    ...(facts.covers.length === 0
      ? undecided('No planned requirement is covered yet')
      : suspect.length
        ? failed(
            'risks',
            `${plural(suspect.length, 'covers link')} changed since the case last passed: run the case again or confirm the link`,
          )
        : passed(`None of ${plural(facts.covers.length, 'covers link')} is suspect`)),
    records: suspect.map((l) => ({
      id: l.requirementId,
      kind: 'requirement',
      title: requirementTitle.get(l.requirementId) ?? null,
      reason: 'suspect',
      testCaseId: l.testCaseId,
      linkId: l.linkId,
    })),
  };
};

/** Every rule, in the order every answer lists them. */
export const READINESS_RULES: readonly ReadinessRule[] = [
  requirementsCovered,
  requirementsPassing,
  passRate,
  openBugs,
  flakyCases,
  newFailures,
  suspectCoverage,
];

export function evaluate(
  facts: ReleaseFacts,
  thresholds: ReadinessThresholds,
  previous: PreviousReadiness | null,
): RuleResult[] {
  const coveringOf = new Map<string, string[]>();
  for (const link of facts.covers)
    coveringOf.set(link.requirementId, [...new Set([...(coveringOf.get(link.requirementId) ?? []), link.testCaseId])]);
  const input: RuleInput = {
    facts,
    thresholds,
    previous,
    title: (id) => facts.cases.get(id)?.title ?? null,
    coveringOf,
  };
  return READINESS_RULES.map((rule) => rule(input));
}

export function verdictOf(rules: RuleResult[]): Verdict {
  if (rules.some((r) => r.status === 'failed' && r.effect === 'blocks')) return 'blocked';
  if (rules.some((r) => r.status === 'failed' && r.effect === 'risks')) return 'at_risk';
  // Nothing has run: nothing says the release works.
  if (rules.find((r) => r.id === 'pass_rate')?.status === 'undefined') return 'at_risk';
  return 'ready';
}

const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
