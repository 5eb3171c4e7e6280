// The one rule for a test case's outcome (machines/case-outcome.ts) and the one way a step is named
// (machines/step-names.ts), over a table of step patterns, including those the door test
// (test/integration/case-outcomes.spec.ts) cannot make with one executor: a lost executor, an outage.
import { expect } from 'chai';
import { type CaseOutcome, judgeCase, type OutcomeStep, tallyOf } from '../../machines/case-outcome.js';
import { stepName, stepPlace } from '../../machines/step-names.js';

type Row = [name: string, steps: string, outcome: CaseOutcome, failing: number | null, attempt?: number];

/** Each step as status[:code]: p, f, e, s, . (pending). */
function steps(pattern: string): OutcomeStep[] {
  const status = { p: 'pass', f: 'fail', e: 'error', s: 'skip', '.': 'pending' } as const;
  return pattern.split(' ').map((token, stepIndex) => {
    const [s, code] = token.split(':');
    return { stepIndex, status: status[s as keyof typeof status], code: code ?? null };
  });
}

const ROWS: Row[] = [
  ['every step passed', 'p p p', 'passed', null],
  ['a check did not hold', 'p f s:E_SKIPPED', 'failed', 1],
  ['continueOnFail: the first failure decides', 'p e:E_TIMEOUT f p', 'error', 1],
  ['a service time-out', 'p e:E_TIMEOUT s:E_SKIPPED', 'error', 1],
  ['the executor reports E_INTERNAL', 'e:E_INTERNAL s:E_SKIPPED', 'error', 0],
  ['the executor was lost mid-case', 'p e:E_INTERNAL s:E_INTERNAL', 'error', 1],
  ['never reached before the executor was lost', 's:E_INTERNAL s:E_INTERNAL', 'error', 0],
  ['cut short by an outage', 'p s:E_DATABASE_UNAVAILABLE', 'error', 1],
  ['cancelled mid-case', 'p s:E_CANCELLED s:E_CANCELLED', 'cancelled', 1],
  ['cancelled before it started', 's:E_CANCELLED', 'cancelled', 0],
  ['capability skips only', 's:E_CAPABILITY s:E_CAPABILITY', 'skipped', null],
  ['a pass and capability skips', 's:E_CAPABILITY p', 'passed', null],
  ['no steps', '', 'skipped', null],
  ['a step still pending', 'p f .', 'pending', null],
  ['passed on a retry', 'p p', 'flaky', null, 2],
  ['failed again on a retry', 'p f', 'failed', 1, 2],
];

describe('machines/case-outcome: one outcome of a test case', () => {
  for (const [name, pattern, outcome, failing, attempt] of ROWS) {
    it(`${name}: ${outcome}`, () => {
      const judged = judgeCase(tallyOf(pattern ? steps(pattern) : [], attempt));
      expect(judged.outcome).to.equal(outcome);
      expect(judged.failingStep?.stepIndex ?? null).to.equal(failing);
    });
  }

  it('judges a tally SQL aggregated (passes counted, the rest listed) as it judges the steps', () => {
    for (const [, pattern, , , attempt] of ROWS) {
      const all = pattern ? steps(pattern) : [];
      const unpassed = all.filter((s) => s.status !== 'pass');
      const tally = { attempt: attempt ?? 1, passed: all.length - unpassed.length, unpassed };
      expect(judgeCase(tally)).to.deep.equal(judgeCase(tallyOf(all, attempt)));
    }
  });
});

describe('machines/step-names: one name of a step for people', () => {
  const run = [
    { stepIndex: 0, caseIndex: 0 },
    { stepIndex: 1, caseIndex: 0 },
    { stepIndex: 2, caseIndex: 1 },
    { stepIndex: 3, caseIndex: 1 },
  ];
  const titles = [{ title: 'Signs in' }, { title: 'Checks out' }];

  it('counts from 1 within the test case, with the run-wide stepIndex', () => {
    expect(stepName(stepPlace(run, 3))).to.equal('step 2 (stepIndex 3)');
    expect(stepName(stepPlace(run, 3, titles))).to.equal('step 2 of “Checks out” (stepIndex 3)');
    expect(stepName(stepPlace(run, 0, titles))).to.equal('step 1 of “Signs in” (stepIndex 0)');
  });

  it('names a test case’s step without a run, and a step whose place was never kept', () => {
    expect(stepName({ position: 3, caseTitle: 'Signs in' })).to.equal('step 3 of “Signs in”');
    expect(stepName({ stepIndex: 7, caseTitle: 'Signs in' })).to.equal('stepIndex 7 of “Signs in”');
  });
});
