// The flakiness rules over a case's history (src/ai/flaky/score.ts).
import { expect } from 'chai';
import { type CaseRun, caseRuns, flakinessOf, rankFlakiness } from '../../src/ai/flaky/score.js';
import type { CaseAttempt } from '../../src/ai/run-history.js';

let seq = 0;
const runId = () => `otr_${String(++seq).padStart(6, '0')}`;
const runs = (outcomes: string, version = 1): CaseRun[] =>
  [...outcomes].map((o) => ({
    runId: runId(),
    createdAt: '2026-01-01T00:00:00.000Z',
    version,
    outcome: o === 'P' ? 'pass' : o === 'R' ? 'flaky' : 'fail',
    failedPositions: o === 'F' ? [1] : [],
  }));

describe('ai: flakiness rules', () => {
  it('flags a pass on retry at once, even with few runs', () => {
    const c = flakinessOf('tc_1', runs('PPR'));
    expect(c.status).to.equal('flaky');
    expect(c.retryPasses).to.equal(1);
    expect(c.reasons[0]).to.match(/passed only on retry in 1 of 3 runs/);
  });

  it('needs enough runs before a rate flags a case', () => {
    expect(flakinessOf('tc_1', runs('PFPFPF')).status).to.equal('insufficient');
    expect(flakinessOf('tc_1', runs('PFPFPFPF')).status).to.equal('flaky');
  });

  it('does not flap: flagged at 30%, cleared only below 10%', () => {
    // 20 runs with 4 flips in the last 20 (21%): under the flag threshold for a case never flagged...
    const calm = runs('PPPPPPPPPPPPFPPPPPFP');
    expect(flakinessOf('tc_1', calm).status).to.equal('stable');
    // ...but a flagged case with the same recent rate stays flagged (above the 10% that clears it).
    const wasFlaky = [...runs('PFPFPFPFPF'), ...runs('PPPPPPPPPPPPFPPPPPFP')];
    expect(flakinessOf('tc_1', wasFlaky).status).to.equal('flaky');
    // Once the rate falls under 10% it clears.
    const healed = [...wasFlaky, ...runs('PPPPPPPPPPPPPPPPPPPP')];
    expect(flakinessOf('tc_1', healed).status).to.equal('stable');
  });

  it('counts flips only between runs of the same version', () => {
    const c = flakinessOf('tc_1', [...runs('PPPPF', 1), ...runs('PPPPP', 2)]);
    expect(c.flips).to.equal(1);
  });

  it('calls a case that nearly always fails broken, not flaky', () => {
    const c = flakinessOf('tc_1', runs('FFFFFFFFFFFFFFFFFFFP'));
    expect(c.status).to.equal('broken');
    expect(c.steps).to.deep.equal([{ position: 1, failures: 19 }]);
  });

  it('reads a pass after a failed attempt as a pass on retry, and the last attempt as the outcome', () => {
    const attempt = (runIdValue: string, n: number, failed: boolean): CaseAttempt => ({
      runId: runIdValue,
      createdAt: '2026-01-01T00:00:00.000Z',
      testCaseId: 'tc_a',
      version: 1,
      caseIndex: 0,
      attempt: n,
      passed: failed ? 0 : 1,
      unpassed: failed ? [{ stepIndex: 0, status: 'fail', code: 'E_ASSERT_FAILED' }] : [],
      firstIndex: 0,
    });
    const byCase = caseRuns([
      attempt('otr_1', 1, true),
      attempt('otr_1', 2, false),
      attempt('otr_2', 1, true),
      attempt('otr_2', 2, true),
      attempt('otr_3', 1, false),
    ]);
    expect(byCase.get('tc_a')!.map((r) => r.outcome)).to.deep.equal(['flaky', 'fail', 'pass']);
    expect(rankFlakiness([attempt('otr_4', 1, true), attempt('otr_4', 2, false)])[0]!.status).to.equal('flaky');
  });
});
