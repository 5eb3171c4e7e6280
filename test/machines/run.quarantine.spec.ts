// The verdict with quarantined test cases: their failures are counted and left out of the verdict.
import { expect } from 'chai';
import {
  decideOutput,
  decideReport,
  decideTimeout,
  initialContext,
  type RunContext,
} from '../../machines/run.steps.js';
import type { PlannedStep, RunInput, StepReport } from '../../machines/types.js';

const step = (stepIndex: number, caseIndex: number, continueOnFail = false): PlannedStep => ({
  stepIndex,
  caseIndex,
  action: { action: 'click', locator: { by: 'testid', value: `s${stepIndex}` } } as PlannedStep['action'],
  timeoutMs: 1000,
  continueOnFail,
});

function input(quarantinedCases?: number[]): RunInput {
  return {
    runId: 'otr_q',
    steps: [step(0, 0, true), step(1, 0), step(2, 1), step(3, 2)],
    capabilities: {},
    vars: {},
    graceMs: 0,
    ...(quarantinedCases ? { quarantinedCases } : {}),
  };
}

/** Decides the reports in order, as the machine does for the step at the cursor. */
function play(context: RunContext, statuses: Array<StepReport['status'] | 'timeout'>): RunContext {
  let c = context;
  for (const status of statuses) {
    while (c.pending.some((o) => o.stepIndex === c.input.steps[c.cursor]?.stepIndex))
      c = { ...c, cursor: c.cursor + 1 };
    c = {
      ...c,
      ...(status === 'timeout'
        ? decideTimeout(c)
        : decideReport(c, { stepIndex: c.input.steps[c.cursor]!.stepIndex, status })),
    };
  }
  return c;
}

describe('run verdict with quarantined test cases', () => {
  it('fails without a quarantine, passes when every failing case is quarantined, and counts the failures either way', () => {
    const statuses: Array<StepReport['status'] | 'timeout'> = ['fail', 'error', 'pass', 'pass'];
    const plain = play(initialContext(input()), statuses);
    expect(decideOutput(plain)).to.deep.equal({
      status: 'failed',
      counts: { passed: 2, failed: 2, skipped: 0, total: 4 },
    });
    const quarantined = play(initialContext(input([0])), statuses);
    expect(quarantined.quarantinedFailures).to.equal(2);
    expect(decideOutput(quarantined)).to.deep.equal({
      status: 'passed',
      counts: { passed: 2, failed: 2, skipped: 0, total: 4 },
    });
  });

  it('still fails on a failure outside the quarantine, a time-out included', () => {
    const context = play(initialContext(input([0])), ['fail', 'pass', 'timeout', 'pass']);
    expect(context.quarantinedFailures).to.equal(1);
    expect(decideOutput(context).status).to.equal('failed');
  });

  it('counts the quarantined failures already recorded when a run is taken over', () => {
    const recorded = [
      { stepIndex: 0, status: 'fail' as const, source: 'executor' as const },
      { stepIndex: 1, status: 'skip' as const, source: 'service' as const },
    ];
    const context = initialContext({ ...input([0]), recorded });
    expect(context.quarantinedFailures).to.equal(1);
    expect(decideOutput(play(context, ['pass', 'pass'])).status).to.equal('passed');
  });
});
