// The readiness rules, each seen passed, failed and undefined (no data yet), and the verdict they make.
import { expect } from 'chai';
import type { LatestResult, ReleaseFacts } from '../../src/artifacts/readiness/facts.js';
import {
  evaluate,
  isSuspect,
  READINESS_RULES,
  type ReadinessThresholds,
  type RuleResult,
  verdictOf,
} from '../../src/artifacts/readiness/rules.js';

const T: ReadinessThresholds = {
  minPassRate: 0.95,
  blockingPassRate: 0.8,
  blockingBugSeverities: ['critical'],
  atRiskBugSeverities: ['major'],
  maxFlakyCases: 0,
};
const at = (iso: string) => new Date(iso);

function result(testCaseId: string, status: string, extra: Partial<LatestResult> = {}): LatestResult {
  return {
    resultId: `res_${testCaseId}`,
    testCaseId,
    testRunId: 'tr_1',
    status,
    labels: [],
    recordedAt: at('2026-11-20T10:00:00Z'),
    ...extra,
  };
}

/** Facts of a release: two planned requirements covered by c1 and c2, both passed, no bug. */
function facts(change: (f: ReleaseFacts) => void = () => {}): ReleaseFacts {
  const f: ReleaseFacts = {
    release: { id: 'rel_1', name: '2.3.0', status: 'in_progress', tenantId: 'ten_1', projectId: 'prj_1' },
    requirements: [
      { id: 'req_1', title: 'Pays', contentChangedAt: null },
      { id: 'req_2', title: 'Ships', contentChangedAt: null },
    ],
    planIds: ['tp_1'],
    runIds: ['tr_1'],
    scopeCaseIds: ['c1', 'c2'],
    cases: new Map([
      ['c1', { title: 'one', labels: [], quarantined: false }],
      ['c2', { title: 'two', labels: [], quarantined: false }],
    ]),
    latest: new Map([
      ['c1', result('c1', 'passed')],
      ['c2', result('c2', 'passed')],
    ]),
    latestAnywhere: new Map([
      ['c1', result('c1', 'passed')],
      ['c2', result('c2', 'passed')],
    ]),
    covers: [
      { linkId: 'lnk_1', testCaseId: 'c1', requirementId: 'req_1', viaSpecificationId: null, confirmedAt: null },
      { linkId: 'lnk_2', testCaseId: 'c2', requirementId: 'req_2', viaSpecificationId: null, confirmedAt: null },
    ],
    bugs: [],
  };
  change(f);
  return f;
}

const rule = (rules: RuleResult[], id: string) => rules.find((r) => r.id === id)!;
const statusOf = (f: ReleaseFacts, id: string, thresholds = T, previous: Parameters<typeof evaluate>[2] = null) => {
  const r = rule(evaluate(f, thresholds, previous), id);
  return [r.status, r.effect];
};

describe('Readiness rules', () => {
  it('answers every rule, in order, and ready when all that can be judged passed', () => {
    const rules = evaluate(facts(), T, {
      verdict: 'ready',
      failingCaseIds: [],
      computedAt: at('2026-11-19T00:00:00Z'),
    });
    expect(rules.map((r) => [r.id, r.status])).to.deep.equal([
      ['requirements_covered', 'passed'],
      ['requirements_passing', 'passed'],
      ['pass_rate', 'passed'],
      ['open_bugs', 'passed'],
      ['flaky_cases', 'undefined'],
      ['new_failures', 'passed'],
      ['suspect_coverage', 'passed'],
    ]);
    expect(verdictOf(rules)).to.equal('ready');
  });

  it('requirements_covered: undefined without planned requirements, failed (blocks) for one no case covers', () => {
    expect(
      statusOf(
        facts((f) => (f.requirements = [])),
        'requirements_covered',
      ),
    ).to.deep.equal(['undefined', 'none']);
    const uncovered = facts((f) => (f.covers = f.covers.slice(1)));
    expect(statusOf(uncovered, 'requirements_covered')).to.deep.equal(['failed', 'blocks']);
    expect(rule(evaluate(uncovered, T, null), 'requirements_covered').records).to.deep.equal([
      { id: 'req_1', kind: 'requirement', title: 'Pays', reason: 'no_coverage' },
    ]);
  });

  it('requirements_passing: undefined when none is covered, blocks for a covering case that last failed, risks for one never run', () => {
    expect(
      statusOf(
        facts((f) => (f.covers = [])),
        'requirements_passing',
      ),
    ).to.deep.equal(['undefined', 'none']);
    expect(
      statusOf(
        facts((f) => f.latest.set('c1', result('c1', 'failed'))),
        'requirements_passing',
      ),
    ).to.deep.equal(['failed', 'blocks']);
    const neverRan = facts((f) => f.latest.delete('c2'));
    expect(statusOf(neverRan, 'requirements_passing')).to.deep.equal(['failed', 'risks']);
    expect(rule(evaluate(neverRan, T, null), 'requirements_passing').records[0]).to.include({
      id: 'req_2',
      reason: 'never_ran',
      testCaseId: 'c2',
    });
  });

  it('pass_rate: undefined without results, blocks under blockingPassRate, risks under minPassRate; skips do not count', () => {
    expect(
      statusOf(
        facts((f) => f.latest.clear()),
        'pass_rate',
      ),
    ).to.deep.equal(['undefined', 'none']);
    const tenCases = (failed: number) =>
      facts((f) => {
        f.scopeCaseIds = Array.from({ length: 11 }, (_, i) => `k${i}`);
        f.latest = new Map(
          f.scopeCaseIds.map((id, i) => [id, result(id, i === 10 ? 'skipped' : i < failed ? 'failed' : 'passed')]),
        );
      });
    expect(statusOf(tenCases(0), 'pass_rate')).to.deep.equal(['passed', 'none']);
    expect(statusOf(tenCases(1), 'pass_rate')).to.deep.equal(['failed', 'risks']); // 90%
    expect(statusOf(tenCases(3), 'pass_rate')).to.deep.equal(['failed', 'blocks']); // 70%
    expect(rule(evaluate(tenCases(3), T, null), 'pass_rate').measured).to.equal(0.7);
    expect(statusOf(tenCases(3), 'pass_rate', { ...T, blockingPassRate: 0.5, minPassRate: 0.6 })).to.deep.equal([
      'passed',
      'none',
    ]);
  });

  it('open_bugs: blocks for a blocking severity, risks for an at-risk one, passes for others; a bug fixed in this release is not counted, one fixed in another is', () => {
    const bug = (severity: string, status = 'open', fixedIn: string[] = []) => ({
      id: `bug_${severity}`,
      title: severity,
      severity,
      status,
      foundBy: ['res_c1'],
      fixedIn,
    });
    expect(
      statusOf(
        facts((f) => {
          f.runIds = [];
          f.scopeCaseIds = [];
          f.latest.clear();
        }),
        'open_bugs',
      ),
    ).to.deep.equal(['undefined', 'none']);
    expect(
      statusOf(
        facts((f) => (f.bugs = [bug('critical')])),
        'open_bugs',
      ),
    ).to.deep.equal(['failed', 'blocks']);
    expect(
      statusOf(
        facts((f) => (f.bugs = [bug('major')])),
        'open_bugs',
      ),
    ).to.deep.equal(['failed', 'risks']);
    const minor = evaluate(
      facts((f) => (f.bugs = [bug('minor')])),
      T,
      null,
    );
    expect([rule(minor, 'open_bugs').status, rule(minor, 'open_bugs').records.length]).to.deep.equal(['passed', 1]);
    expect(
      statusOf(
        facts((f) => (f.bugs = [bug('critical', 'resolved', ['rel_1'])])),
        'open_bugs',
      ),
    ).to.deep.equal(['passed', 'none']);
    expect(
      statusOf(
        facts((f) => (f.bugs = [bug('critical', 'resolved', ['rel_9'])])),
        'open_bugs',
      ),
    ).to.deep.equal(['failed', 'blocks']);
    expect(
      statusOf(
        facts((f) => (f.bugs = [bug('critical', 'wont_fix', ['rel_9'])])),
        'open_bugs',
      ),
    ).to.deep.equal(['passed', 'none']);
  });

  it('flaky_cases: undefined until something reports flakiness or quarantine, then risks past maxFlakyCases', () => {
    expect(statusOf(facts(), 'flaky_cases')).to.deep.equal(['undefined', 'none']);
    const flaky = facts((f) => f.latest.set('c1', result('c1', 'passed', { labels: ['flaky'] })));
    expect(statusOf(flaky, 'flaky_cases')).to.deep.equal(['failed', 'risks']);
    expect(statusOf(flaky, 'flaky_cases', { ...T, maxFlakyCases: 1 })).to.deep.equal(['passed', 'none']);
    expect(
      statusOf(
        facts((f) => f.latest.set('c2', result('c2', 'flaky'))),
        'flaky_cases',
      ),
    ).to.deep.equal(['failed', 'risks']);
    const quarantined = facts((f) => f.cases.set('c2', { title: 'two', labels: ['quarantined'], quarantined: true }));
    expect(rule(evaluate(quarantined, T, null), 'flaky_cases').records).to.deep.equal([
      { id: 'c2', kind: 'test_case', title: 'two', reason: 'quarantined' },
    ]);
  });

  it('new_failures: undefined the first time, risks for a case failing since the previous readiness, passes for one failing already', () => {
    const failing = facts((f) => f.latest.set('c1', result('c1', 'failed')));
    expect(statusOf(failing, 'new_failures')).to.deep.equal(['undefined', 'none']);
    const before = { verdict: 'ready' as const, failingCaseIds: [], computedAt: at('2026-11-19T00:00:00Z') };
    expect(statusOf(failing, 'new_failures', T, before)).to.deep.equal(['failed', 'risks']);
    expect(statusOf(failing, 'new_failures', T, { ...before, failingCaseIds: ['c1'] })).to.deep.equal([
      'passed',
      'none',
    ]);
  });

  it('suspect_coverage: a requirement changed after its case last passed, until the case runs again or the link is confirmed', () => {
    const changed = (confirmedAt: Date | null = null) =>
      facts((f) => {
        f.requirements[0]!.contentChangedAt = '2026-11-21T00:00:00.000Z';
        f.covers[0]!.confirmedAt = confirmedAt;
      });
    expect(
      statusOf(
        facts((f) => (f.covers = [])),
        'suspect_coverage',
      ),
    ).to.deep.equal(['undefined', 'none']);
    expect(statusOf(changed(), 'suspect_coverage')).to.deep.equal(['failed', 'risks']);
    expect(rule(evaluate(changed(), T, null), 'suspect_coverage').records).to.deep.equal([
      { id: 'req_1', kind: 'requirement', title: 'Pays', reason: 'suspect', testCaseId: 'c1', linkId: 'lnk_1' },
    ]);
    expect(statusOf(changed(at('2026-11-22T00:00:00Z')), 'suspect_coverage')).to.deep.equal(['passed', 'none']);
    expect(
      isSuspect('2026-11-21T00:00:00.000Z', { status: 'passed', recordedAt: at('2026-11-22T00:00:00Z') }, null),
    ).to.equal(false); // ran again
    expect(
      isSuspect('2026-11-21T00:00:00.000Z', { status: 'failed', recordedAt: at('2026-11-20T00:00:00Z') }, null),
    ).to.equal(false); // failing, not suspect
    expect(isSuspect('2026-11-21T00:00:00.000Z', undefined, null)).to.equal(false);
  });

  it('makes the verdict: blocked over at_risk over ready; at_risk when nothing has a result', () => {
    expect(
      verdictOf(
        evaluate(
          facts((f) => f.latest.set('c1', result('c1', 'failed'))),
          T,
          null,
        ),
      ),
    ).to.equal('blocked');
    expect(
      verdictOf(
        evaluate(
          facts((f) => f.latest.delete('c2')),
          T,
          null,
        ),
      ),
    ).to.equal('at_risk'); // c2 never ran: risks
    expect(
      verdictOf(
        evaluate(
          facts((f) => f.latest.clear()),
          T,
          null,
        ),
      ),
    ).to.equal('at_risk');
  });

  it('is a list of named rules, each answering the rule its name says, in the order of every answer', () => {
    const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const answered = evaluate(facts(), T, null).map((r) => r.id);
    expect(READINESS_RULES.map((rule) => snake(rule.name))).to.deep.equal(answered);
    expect(answered).to.deep.equal([
      'requirements_covered',
      'requirements_passing',
      'pass_rate',
      'open_bugs',
      'flaky_cases',
      'new_failures',
      'suspect_coverage',
    ]);
  });
});
