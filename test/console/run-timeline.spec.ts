// The run's one time line, derived from its trace (src/console/run-timeline.ts): frames and writes
// where the run machine emits them, each step's times, and the two comparisons of the compare page.
import { expect } from 'chai';
import { firstPathDifference, firstStepDifference } from '../../src/console/pages/compare.js';
import { runTimeline } from '../../src/console/run-timeline.js';
import type { TraceEntry } from '../../src/otp/store/run-trace.js';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 25, 10, 0, 0, ms)).toISOString();
const entry = (ms: number, event: string, from: string | null, to: string, cursor?: number): TraceEntry => ({
  at: at(ms),
  event,
  from,
  to,
  ...(cursor === undefined ? {} : { cursor }),
});

describe('Console: the run time line derived from the trace', () => {
  // Step 1 passes, step 2 is skipped by the service (its capability is missing), step 3 times out.
  const trace = [
    entry(0, 'xstate.init', null, 'advancing', 0),
    entry(1, 'always', 'advancing', 'running', 0),
    entry(40, 'STEP_RESULT', 'running', 'recording', 2),
    entry(43, 'STEPS_RECORDED', 'recording', 'running', 2),
    entry(1043, 'after stepTimeout', 'running', 'advancing', 3),
    entry(1043, 'always', 'advancing', 'finishing', 3),
    entry(1050, 'RUN_FINISH_WRITTEN', 'finishing', 'done', 3),
  ];
  const { rows, steps } = runTimeline({ transitions: trace, dropped: 0, status: 'failed' }, { totalSteps: 3 });

  it('puts each frame and write beside the transition that sent, received or answered it', () => {
    const text = rows.map((r) => `${r.t}:${r.kind}:${r.text}`);
    expect(text).to.deep.equal([
      '0:transition:xstate.init',
      '0:out:run.start: 3 steps',
      '1:transition:always',
      '1:out:step.exec of step 1',
      '2:in:step.result of step 1',
      '2:transition:STEP_RESULT',
      '2:service:decided by the service: step 2',
      '3:write:durable: steps 1–2',
      '3:transition:STEPS_RECORDED',
      '3:out:step.exec of step 3',
      '4:transition:after stepTimeout',
      '4:service:decided by the service: timed out; step 3',
      '5:transition:always',
      '6:write:durable: the verdict and step 3',
      '6:transition:RUN_FINISH_WRITTEN',
      '6:out:run.finished',
    ]);
  });

  it('gives each step the transitions of its frames: the gap from its result to the next step.exec shows', () => {
    expect(steps.get(0)).to.deep.include({
      exec: { t: 1, at: at(1) },
      decided: { t: 2, at: at(40), by: 'executor' },
      written: { t: 3, at: at(43) },
      next: { t: 3, at: at(43) },
    });
    expect(steps.get(1)).to.deep.include({
      decided: { t: 2, at: at(40), by: 'service' },
      written: { t: 3, at: at(43) },
    });
    expect(steps.get(1)!.exec).to.equal(undefined);
    expect(steps.get(2)).to.deep.include({
      exec: { t: 3, at: at(43) },
      decided: { t: 4, at: at(1043), by: 'service' },
      written: { t: 6, at: at(1050) },
    });
  });

  it("numbers transitions from the run's start when older ones were dropped, and sends no run.finished to a lost executor", () => {
    const lost = runTimeline(
      {
        transitions: [
          entry(5, 'STEPS_RECORDED', 'recording', 'running', 4),
          entry(9, 'EXECUTOR_LOST', 'running', 'finishing', 6),
          entry(12, 'RUN_FINISH_WRITTEN', 'finishing', 'done', 6),
        ],
        dropped: 100,
        status: 'error',
      },
      { totalSteps: 6, reason: 'executor connection lost (1006)' },
    );
    expect(lost.rows.filter((r) => r.kind === 'transition').map((r) => r.t)).to.deep.equal([100, 101, 102]);
    expect(lost.rows.some((r) => r.frame === 'run.finished')).to.equal(false);
    expect(lost.steps.get(4)!.exec).to.deep.equal({ t: 100, at: at(5) });
    expect(lost.rows.map((r) => r.text)).to.include('decided by the service: steps 5–6');
  });

  it('says run.cancel where the machine sends it, and leaves steps unnumbered in a trace without cursors', () => {
    const cancelled = runTimeline(
      {
        transitions: [
          entry(0, 'xstate.init', null, 'advancing'),
          entry(1, 'always', 'advancing', 'running'),
          entry(2, 'CANCEL', 'running', 'finishing'),
        ],
        dropped: 0,
        status: 'cancelled',
      },
      { totalSteps: 2 },
    );
    expect(cancelled.rows.filter((r) => r.frame).map((r) => r.text)).to.deep.equal([
      'run.start: 2 steps',
      'step.exec',
      'run.cancel',
    ]);
    expect(cancelled.steps.size).to.equal(0);
  });

  it('finds the first step and the first transition where two runs part', () => {
    const step = (stepIndex: number, status: string, code?: string) =>
      ({
        stepIndex,
        status,
        action: { action: 'click' },
        durationMs: 1,
        label: null,
        error: code ? { code } : null,
      }) as never;
    expect(firstStepDifference([step(0, 'pass'), step(1, 'pass')], [step(0, 'pass'), step(1, 'fail', 'E_X')])).to.equal(
      1,
    );
    expect(firstStepDifference([step(0, 'fail', 'E_A')], [step(0, 'fail', 'E_B')])).to.equal(0);
    expect(firstStepDifference([step(0, 'pass')], [step(0, 'pass')])).to.equal(undefined);
    expect(firstStepDifference([step(0, 'pass')], [step(0, 'pass'), step(1, 'pass')])).to.equal(1);
    expect(firstPathDifference(trace, trace)).to.equal(undefined);
    expect(
      firstPathDifference(trace, [...trace.slice(0, 4), entry(50, 'STEP_RESULT', 'running', 'finishing', 3)]),
    ).to.equal(4);
  });
});
