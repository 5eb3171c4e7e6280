import { expect } from 'chai';
import { PlannedRuns } from '../../src/otp/store/planned-runs.js';
import type { NewRun } from '../../src/otp/store/run-store.js';

let n = 0;
function run(projectId: string, steps: number, requestedSessionId: string | null = null): NewRun {
  return {
    id: `otr_${String(++n).padStart(4, '0')}`,
    tenantId: 'ten_1',
    projectId,
    requestedSessionId,
    vars: {},
    allowedOrigins: [],
    testCases: [{ id: 'tc_x', title: 'x', steps }],
    planId: null,
    testRunId: null,
    finishTestRun: false,
    steps: Array.from({ length: steps }, (_, stepIndex) => ({
      stepIndex,
      caseIndex: 0,
      testCaseId: 'tc_x',
      action: { action: 'navigate', url: 'https://a.test' },
      timeoutMs: 1000,
      continueOnFail: false,
    })),
  };
}

describe('PlannedRuns (the runs a claim of this process need not read back)', () => {
  it('offers a session the oldest runs of its project it may take: unpinned, or pinned to it', () => {
    const planned = new PlannedRuns();
    const runs = [
      run('prj_a', 1),
      run('prj_a', 1, 'ots_other'),
      run('prj_b', 1),
      run('prj_a', 1, 'ots_mine'),
      run('prj_a', 1),
    ];
    for (const r of runs) planned.remember(r);
    expect([...planned.candidates('prj_a', 'ots_mine', 10).keys()]).to.deep.equal([
      runs[0]!.id,
      runs[3]!.id,
      runs[4]!.id,
    ]);
    expect([...planned.candidates('prj_a', 'ots_mine', 2).keys()]).to.deep.equal([runs[0]!.id, runs[3]!.id]);
    expect([...planned.candidates('prj_c', 'ots_mine', 10).keys()]).to.deep.equal([]);
    const offered = planned.candidates('prj_b', 'ots_any', 1).get(runs[2]!.id)!;
    expect(offered.steps).to.deep.equal([
      {
        stepIndex: 0,
        caseIndex: 0,
        action: { action: 'navigate', url: 'https://a.test' },
        timeoutMs: 1000,
        continueOnFail: false,
      },
    ]);
    planned.forget(runs[0]!.id);
    expect([...planned.candidates('prj_a', 'ots_mine', 1).keys()]).to.deep.equal([runs[3]!.id]);
    expect(planned.size).to.equal(4);
  });

  it('keeps at most maxSteps planned steps, forgetting the oldest runs first', () => {
    const planned = new PlannedRuns(10);
    const runs = [run('prj_a', 4), run('prj_a', 4), run('prj_a', 4), run('prj_a', 11)];
    for (const r of runs.slice(0, 3)) planned.remember(r);
    // 12 steps over 10: the oldest went.
    expect([...planned.candidates('prj_a', 'ots_1', 10).keys()]).to.deep.equal([runs[1]!.id, runs[2]!.id]);
    // A run larger than the whole allowance is not kept, and evicts nothing.
    planned.remember(runs[3]!);
    expect(planned.size).to.equal(2);
  });

  it('looks at the oldest few runs of a project only, not every run pinned to other sessions', () => {
    const planned = new PlannedRuns();
    for (let i = 0; i < 500; i++) planned.remember(run('prj_a', 1, 'ots_busy'));
    const mine = run('prj_a', 1, 'ots_mine');
    planned.remember(mine);
    expect(planned.candidates('prj_a', 'ots_mine', 4).size).to.equal(0);
    expect(planned.size).to.equal(501);
  });
});
