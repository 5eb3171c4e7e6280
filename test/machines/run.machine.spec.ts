import { expect } from 'chai';
import { SimulatedClock, createActor, fromPromise } from 'xstate';
import { runMachine } from '../../machines/run.machine.js';
import type {
  Capabilities,
  FinishRunInput,
  PlannedStep,
  RecordStepsInput,
  RunInput,
  StepAction,
  StepExecPayload,
  StepOutcome,
  StepReport,
} from '../../machines/types.js';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Call =
  | { type: 'sendRunStart'; params: { runId: string } }
  | { type: 'sendStepExec'; params: StepExecPayload }
  | { type: 'sendRunCancel'; params: { runId: string; reason: string } }
  | { type: 'sendRunFinished'; params: unknown }
  | { type: 'rejectStepResult'; params: { stepIndex: number; reason: string } }
  | { type: 'recordSteps'; params: RecordStepsInput }
  | { type: 'finishRun'; params: FinishRunInput };

const click: StepAction = { action: 'click', locator: { css: '#go' } };

function step(
  stepIndex: number,
  caseIndex: number,
  options: Partial<Omit<PlannedStep, 'stepIndex' | 'caseIndex'>> = {},
): PlannedStep {
  return { stepIndex, caseIndex, action: click, timeoutMs: 1000, continueOnFail: false, ...options };
}

function runInput(steps: PlannedStep[], extra: Partial<RunInput> = {}): RunInput {
  return { runId: 'otr_1', steps, capabilities: {}, vars: {}, graceMs: 200, ...extra };
}

interface HarnessOptions {
  /** Called for each recordSteps; the machine is answered when the returned promise settles. */
  record?: (input: RecordStepsInput) => Promise<void>;
  finish?: (input: FinishRunInput) => Promise<void>;
}

function start(input: RunInput, options: HarnessOptions = {}) {
  const calls: Call[] = [];
  const errors: unknown[] = [];
  const clock = new SimulatedClock();
  const machine = runMachine.provide({
    actions: {
      sendRunStart: (_, params) => void calls.push({ type: 'sendRunStart', params }),
      sendStepExec: (_, params) => void calls.push({ type: 'sendStepExec', params }),
      sendRunCancel: (_, params) => void calls.push({ type: 'sendRunCancel', params }),
      sendRunFinished: (_, params) => void calls.push({ type: 'sendRunFinished', params }),
      rejectStepResult: (_, params) => void calls.push({ type: 'rejectStepResult', params }),
      // As src does it: the write runs outside the machine, which is answered with an event.
      recordSteps: (_, write) => {
        calls.push({ type: 'recordSteps', params: write });
        Promise.resolve(options.record?.(write)).then(
          () => actor.send({ type: 'STEPS_RECORDED' }),
          (error: Error) => actor.send({ type: 'STEPS_NOT_RECORDED', message: error.message }),
        );
      },
    },
    actors: {
      finishRun: fromPromise<void, FinishRunInput>(async ({ input: write }) => {
        calls.push({ type: 'finishRun', params: write });
        await options.finish?.(write);
      }),
    },
  });
  const actor = createActor(machine, { input, clock });
  actor.subscribe({ error: (error) => errors.push(error) });
  actor.start();
  const result = (report: StepReport) => actor.send({ type: 'STEP_RESULT', report });
  return { actor, calls, errors, clock, result };
}

type Harness = ReturnType<typeof start>;

const types = (calls: Call[]) => calls.map((call) => call.type);
const execs = (calls: Call[]) =>
  calls.flatMap((call) => (call.type === 'sendStepExec' ? [call.params.stepIndex] : []));
const writes = (calls: Call[]) =>
  calls.flatMap((call) =>
    call.type === 'recordSteps' || call.type === 'finishRun' ? [call.params.outcomes] : [],
  );
const finishCall = (calls: Call[]) => {
  const found = calls.filter((call) => call.type === 'finishRun');
  expect(found).to.have.length(1);
  return (found[0] as Extract<Call, { type: 'finishRun' }>).params;
};
const recordCalls = (calls: Call[]) =>
  calls.flatMap((call) => (call.type === 'recordSteps' ? [call.params] : []));

/** Rule 8: each stepIndex was handed to exactly one write, and all of them were. */
function expectEachRecordedOnce(calls: Call[], total: number) {
  const indexes = writes(calls)
    .flat()
    .map((outcome) => outcome.stepIndex)
    .sort((a, b) => a - b);
  expect(indexes).to.deep.equal([...Array(total).keys()]);
}

function outcomeByIndex(calls: Call[]): Map<number, StepOutcome> {
  const map = new Map<number, StepOutcome>();
  for (const outcome of writes(calls).flat()) map.set(outcome.stepIndex, outcome);
  return map;
}

function codeOf(outcome: StepOutcome | undefined) {
  return outcome && { status: outcome.status, source: outcome.source, code: outcome.error?.code };
}

function expectDone(h: Harness) {
  const snapshot = h.actor.getSnapshot();
  expect(snapshot.status).to.equal('done');
  expect(snapshot.value).to.equal('done');
  return snapshot.output!;
}

describe('run machine', () => {
  let current: Harness | undefined;
  const track = (h: Harness) => (current = h);

  afterEach(() => {
    if (current) {
      expect(current.errors, 'no actor errors').to.deep.equal([]);
      current.actor.stop();
      current = undefined;
    }
  });

  describe('order (rule 1)', () => {
    it('sends run.start first, then one step at a time in order, each after the previous result is written', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
      expect(h.calls[0]).to.deep.equal({ type: 'sendRunStart', params: { runId: 'otr_1' } });
      expect(execs(h.calls)).to.deep.equal([0]);
      expect(h.actor.getSnapshot().value).to.equal('running');

      await flush();
      expect(execs(h.calls), 'still only step 0 in flight').to.deep.equal([0]);

      h.result({ stepIndex: 0, status: 'pass', durationMs: 12 });
      await flush();
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();

      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'finishRun',
        'sendRunFinished',
      ]);
      expect(execs(h.calls)).to.deep.equal([0, 1, 2]);
      expect(recordCalls(h.calls)).to.deep.equal([
        { runId: 'otr_1', outcomes: [{ stepIndex: 0, status: 'pass', durationMs: 12, source: 'executor' }] },
        { runId: 'otr_1', outcomes: [{ stepIndex: 1, status: 'pass', source: 'executor' }] },
      ]);
      const counts = { passed: 3, failed: 0, skipped: 0, total: 3 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [{ stepIndex: 2, status: 'pass', source: 'executor' }],
        status: 'passed',
        counts,
      });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'passed', counts },
      });
      expect(expectDone(h)).to.deep.equal({ status: 'passed', counts });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('does not send the next step until recordSteps has resolved', async () => {
      const write = deferred();
      const h = track(start(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      expect(execs(h.calls)).to.deep.equal([0]);
      write.resolve();
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      expect(h.actor.getSnapshot().value).to.equal('running');
    });

    it('puts the step fields into step.exec', () => {
      const h = track(
        start(
          runInput([
            step(0, 0, { timeoutMs: 5000, continueOnFail: true, label: 'Open', evidence: 'onFail' }),
          ]),
        ),
      );
      expect(h.calls[1]).to.deep.equal({
        type: 'sendStepExec',
        params: {
          stepIndex: 0,
          timeoutMs: 5000,
          continueOnFail: true,
          label: 'Open',
          evidence: 'onFail',
          step: click,
        },
      });
    });

    it('fills {{vars}} in nested locators of step.exec and leaves the planned step untouched', () => {
      const action: StepAction = {
        action: 'type',
        locator: { candidates: [{ css: '#{{field}}' }, { text: 'Log in as {{user}}' }] },
        text: '{{password}}',
        clear: true,
      };
      const h = track(
        start(
          runInput([step(0, 0, { action })], {
            vars: { field: 'pw', user: 'ann', password: 's3cret' },
          }),
        ),
      );
      const exec = h.calls[1] as Extract<Call, { type: 'sendStepExec' }>;
      expect(exec.params.step).to.deep.equal({
        action: 'type',
        locator: { candidates: [{ css: '#pw' }, { text: 'Log in as ann' }] },
        text: 's3cret',
        clear: true,
      });
      expect(action.text).to.equal('{{password}}');
    });
  });

  describe('capabilities (rule 2)', () => {
    it('skips a step whose capability is declared false with E_CAPABILITY, without failing the run', async () => {
      const capabilities: Capabilities = { eval: false, upload: false };
      const steps = [
        step(0, 0),
        step(1, 0, { action: { action: 'eval', script: '1' } }),
        // screenshot is not mentioned in capabilities: unknown, so it is sent.
        step(2, 0, { action: { action: 'screenshot', fullPage: true } }),
        step(3, 0, { action: { action: 'upload', locator: { css: 'input' }, assetId: 'ast_1' } }),
      ];
      const h = track(start(runInput(steps, { capabilities })));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'pass', source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_CAPABILITY', message: 'the executor declared capability eval false' },
        },
      ]);
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(execs(h.calls), 'the upload step is never sent').to.deep.equal([0, 2]);
      const finish = finishCall(h.calls);
      expect(finish.outcomes.map(codeOf)).to.deep.equal([
        { status: 'pass', source: 'executor', code: undefined },
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
      expect(finish.status).to.equal('passed');
      expect(expectDone(h)).to.deep.equal({
        status: 'passed',
        counts: { passed: 2, failed: 0, skipped: 2, total: 4 },
      });
      expectEachRecordedOnce(h.calls, 4);
    });

    it('writes a leading capability skip after run.start and before the first step.exec', async () => {
      const h = track(
        start(
          runInput([step(0, 0, { action: { action: 'upload', locator: 'input', assetId: 'ast_1' } }), step(1, 0)], {
            capabilities: { upload: false },
          }),
        ),
      );
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'recordSteps']);
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'recordSteps', 'sendStepExec']);
      expect(execs(h.calls)).to.deep.equal([1]);
      expect(recordCalls(h.calls)[0]!.outcomes.map(codeOf)).to.deep.equal([
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
    });

    it('sends a step when its capability is declared true', () => {
      const h = track(
        start(runInput([step(0, 0, { action: { action: 'eval', script: '1' } })], { capabilities: { eval: true } })),
      );
      expect(execs(h.calls)).to.deep.equal([0]);
    });

    it('finishes without sending anything when every step is capability-skipped', async () => {
      const h = track(
        start(
          runInput([step(0, 0, { action: { action: 'eval', script: 'x' } })], { capabilities: { eval: false } }),
        ),
      );
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'finishRun', 'sendRunFinished']);
      expect(finishCall(h.calls).outcomes.map(codeOf)).to.deep.equal([
        { status: 'skip', source: 'service', code: 'E_CAPABILITY' },
      ]);
      expect(expectDone(h).status).to.equal('passed');
    });
  });

  describe('failures and continueOnFail (rules 3 and 7)', () => {
    it('skips the rest of a failed test case with E_SKIPPED in one write, then starts the next case', async () => {
      const steps = [step(0, 0), step(1, 0), step(2, 0), step(3, 1), step(4, 1)];
      const h = track(start(runInput(steps)));
      const failure = { code: 'E_LOCATOR_NOT_FOUND', message: 'no #go', triedLocators: [{ css: '#go' }] };
      h.result({ stepIndex: 0, status: 'fail', error: failure });
      await flush();
      expect(recordCalls(h.calls)).to.have.length(1);
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'fail', error: failure, source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 0 of the same test case did not pass' },
        },
        {
          stepIndex: 2,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 0 of the same test case did not pass' },
        },
      ]);
      expect(execs(h.calls), 'case 2 still runs').to.deep.equal([0, 3]);
      h.result({ stepIndex: 3, status: 'pass' });
      await flush();
      h.result({ stepIndex: 4, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 3, 4]);
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 1, skipped: 2, total: 5 },
      });
      expectEachRecordedOnce(h.calls, 5);
    });

    it('treats an executor error like a failure', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'error', error: { code: 'E_INTERNAL', message: 'crash' } });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      expect(codeOf(outcomeByIndex(h.calls).get(1))).to.deep.equal({
        status: 'skip',
        source: 'service',
        code: 'E_SKIPPED',
      });
    });

    it('goes on with the next step when continueOnFail is true', async () => {
      const h = track(start(runInput([step(0, 0, { continueOnFail: true }), step(1, 0), step(2, 0)])));
      h.result({ stepIndex: 0, status: 'fail', error: { code: 'E_ASSERT_FAILED', message: 'no' } });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 1, skipped: 0, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('records an executor skip as-is and does not count it as a failure', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0)])));
      h.result({ stepIndex: 0, status: 'skip' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.result({ stepIndex: 1, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'passed',
        counts: { passed: 1, failed: 0, skipped: 1, total: 2 },
      });
    });

    it('counts pass, fail + error and skip over a mixed run', async () => {
      const steps = [
        step(0, 0, { continueOnFail: true }),
        step(1, 0, { continueOnFail: true }),
        step(2, 0, { continueOnFail: true }),
        step(3, 0, { continueOnFail: true }),
        step(4, 1),
      ];
      const h = track(start(runInput(steps)));
      const statuses = ['pass', 'fail', 'error', 'skip', 'pass'] as const;
      for (const [stepIndex, status] of statuses.entries()) {
        h.result({ stepIndex, status });
        await flush();
      }
      expect(execs(h.calls)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 2, failed: 2, skipped: 1, total: 5 },
      });
    });

    it('finishes a zero-step run as passed at once', async () => {
      const h = track(start(runInput([])));
      await flush();
      const counts = { passed: 0, failed: 0, skipped: 0, total: 0 };
      expect(h.calls).to.deep.equal([
        { type: 'sendRunStart', params: { runId: 'otr_1' } },
        { type: 'finishRun', params: { runId: 'otr_1', outcomes: [], status: 'passed', counts } },
        { type: 'sendRunFinished', params: { runId: 'otr_1', status: 'passed', counts } },
      ]);
      expect(expectDone(h)).to.deep.equal({ status: 'passed', counts });
    });
  });

  describe('time-out (rule 4)', () => {
    it('records E_TIMEOUT at exactly timeoutMs + grace, not a millisecond before', async () => {
      const h = track(
        start(runInput([step(0, 0, { timeoutMs: 1000 }), step(1, 0), step(2, 1)], { graceMs: 250 })),
      );
      h.clock.increment(1249);
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec']);
      expect(h.actor.getSnapshot().value).to.equal('running');

      h.clock.increment(1);
      await flush();
      expect(recordCalls(h.calls)[0]!.outcomes).to.deep.equal([
        {
          stepIndex: 0,
          status: 'error',
          source: 'service',
          error: {
            code: 'E_TIMEOUT',
            message: 'no step.result within 1000 ms (+250 ms grace, 1250 ms in all)',
          },
        },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_SKIPPED', message: 'step 0 of the same test case did not pass' },
        },
      ]);
      expect(execs(h.calls), 'the time-out failed case 0; case 1 runs').to.deep.equal([0, 2]);

      // The executor answers late: refused, nothing changes.
      const before = h.actor.getSnapshot();
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      expect(h.actor.getSnapshot().context).to.deep.equal(before.context);

      h.result({ stepIndex: 2, status: 'pass' });
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 1, failed: 1, skipped: 1, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('uses each step’s own timeoutMs and restarts the timer for every step', async () => {
      const h = track(
        start(
          runInput([step(0, 0, { timeoutMs: 100, continueOnFail: true }), step(1, 0, { timeoutMs: 5000 })], {
            graceMs: 10,
          }),
        ),
      );
      h.clock.increment(110);
      await flush();
      expect(execs(h.calls), 'timed-out step with continueOnFail true: next one is sent').to.deep.equal([0, 1]);
      h.clock.increment(5009);
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('running');
      h.clock.increment(1);
      await flush();
      expect(expectDone(h)).to.deep.equal({
        status: 'failed',
        counts: { passed: 0, failed: 2, skipped: 0, total: 2 },
      });
      expect(finishCall(h.calls).outcomes.map(codeOf)).to.deep.equal([
        { status: 'error', source: 'service', code: 'E_TIMEOUT' },
      ]);
    });

    it('a result before the time-out cancels the timer', async () => {
      const h = track(start(runInput([step(0, 0, { timeoutMs: 100 }), step(1, 0, { timeoutMs: 100 })], { graceMs: 0 })));
      h.clock.increment(99);
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.clock.increment(99);
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('running');
      expect(writes(h.calls).flat().map(codeOf)).to.deep.equal([
        { status: 'pass', source: 'executor', code: undefined },
      ]);
    });
  });

  describe('stray step.result', () => {
    it('rejects results for steps not in flight and leaves the run unchanged', async () => {
      const h = track(start(runInput([step(0, 0, { timeoutMs: 100 }), step(1, 0), step(2, 0)], { graceMs: 0 })));
      h.clock.increment(50);
      const before = h.actor.getSnapshot();
      h.result({ stepIndex: 1, status: 'pass' });
      h.result({ stepIndex: 99, status: 'pass' });
      await flush();
      expect(h.calls.slice(2)).to.deep.equal([
        {
          type: 'rejectStepResult',
          params: { stepIndex: 1, reason: 'step 1 is not in flight (step 0 is)' },
        },
        { type: 'rejectStepResult', params: { stepIndex: 99, reason: 'no step 99 in this run' } },
      ]);
      expect(h.actor.getSnapshot().value).to.equal('running');
      expect(h.actor.getSnapshot().context).to.deep.equal(before.context);
      // The stray results did not restart the time-out of step 0.
      h.clock.increment(50);
      await flush();
      expect(codeOf(outcomeByIndex(h.calls).get(0))).to.deep.equal({
        status: 'error',
        source: 'service',
        code: 'E_TIMEOUT',
      });
    });

    it('rejects a duplicate result, including one arriving while the first is being written', async () => {
      const write = deferred();
      const h = track(start(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      write.resolve();
      await flush();
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      expect(outcomeByIndex(h.calls).get(0)!.status).to.equal('pass');
      expect(execs(h.calls)).to.deep.equal([0, 1]);
    });

    it('rejects a result for a step already skipped with its test case', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      h.result({ stepIndex: 1, status: 'pass' });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 1, reason: 'step 1 already has a result' },
      });
    });
  });

  describe('cancel (rule 5)', () => {
    it('cancels mid-step: run.cancel, in-flight and later steps E_CANCELLED, finishRun, then run.finished', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1), step(3, 1)])));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      h.actor.send({ type: 'CANCEL', reason: 'stopped by ann' });
      await flush();
      expect(types(h.calls).slice(4)).to.deep.equal(['sendRunCancel', 'finishRun', 'sendRunFinished']);
      expect(h.calls[4]).to.deep.equal({
        type: 'sendRunCancel',
        params: { runId: 'otr_1', reason: 'stopped by ann' },
      });
      const cancelled = (stepIndex: number): StepOutcome => ({
        stepIndex,
        status: 'skip',
        source: 'service',
        error: { code: 'E_CANCELLED', message: 'stopped by ann' },
      });
      const counts = { passed: 1, failed: 0, skipped: 3, total: 4 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [cancelled(1), cancelled(2), cancelled(3)],
        status: 'cancelled',
        reason: 'stopped by ann',
        counts,
      });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'cancelled', reason: 'stopped by ann', counts },
      });
      expect(execs(h.calls)).to.deep.equal([0, 1]);
      expect(expectDone(h)).to.deep.equal({ status: 'cancelled', reason: 'stopped by ann', counts });
      expectEachRecordedOnce(h.calls, 4);
    });

    it('uses a default reason when CANCEL carries none', async () => {
      const h = track(start(runInput([step(0, 0)])));
      h.actor.send({ type: 'CANCEL' });
      await flush();
      expect(h.calls[2]).to.deep.equal({
        type: 'sendRunCancel',
        params: { runId: 'otr_1', reason: 'cancel requested' },
      });
      expect(expectDone(h).reason).to.equal('cancel requested');
    });

    it('during a pending recordSteps: waits for the write, then cancels without sending the next step', async () => {
      const write = deferred();
      const steps = [step(0, 0), step(1, 0), step(2, 0)];
      const h = track(start(runInput(steps), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'user' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps']);

      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendRunCancel',
        'finishRun',
        'sendRunFinished',
      ]);
      expect(execs(h.calls), 'step 1 is never sent').to.deep.equal([0]);
      const finish = finishCall(h.calls);
      expect(finish.status).to.equal('cancelled');
      expect(finish.outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_CANCELLED'],
        [2, 'skip', 'E_CANCELLED'],
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'cancelled',
        reason: 'user',
        counts: { passed: 1, failed: 0, skipped: 2, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('does not re-record the skipped rest of an aborted case when cancelling', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1), step(3, 1)])));
      h.result({ stepIndex: 0, status: 'fail' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2]);
      h.actor.send({ type: 'CANCEL', reason: 'r' });
      await flush();
      expect(finishCall(h.calls).outcomes.map((o) => [o.stepIndex, o.error?.code])).to.deep.equal([
        [2, 'E_CANCELLED'],
        [3, 'E_CANCELLED'],
      ]);
      expectEachRecordedOnce(h.calls, 4);
      expect(expectDone(h).counts).to.deep.equal({ passed: 0, failed: 1, skipped: 3, total: 4 });
    });

    it('ignores CANCEL once the run is finishing', async () => {
      const finish = deferred();
      const h = track(start(runInput([step(0, 0)]), { finish: () => finish.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('finishing');
      h.actor.send({ type: 'CANCEL', reason: 'too late' });
      h.result({ stepIndex: 0, status: 'fail' });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'rejectStepResult',
        params: { stepIndex: 0, reason: 'step 0 already has a result' },
      });
      finish.resolve();
      await flush();
      expect(types(h.calls)).to.not.include('sendRunCancel');
      expect(expectDone(h).status).to.equal('passed');
    });
  });

  describe('executor lost (rule 6)', () => {
    it('records the in-flight step error and later ones skip with E_INTERNAL, finishes error, sends nothing', async () => {
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1)])));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'socket closed (1006)' });
      await flush();
      const lost = (stepIndex: number, status: 'error' | 'skip'): StepOutcome => ({
        stepIndex,
        status,
        source: 'service',
        error: { code: 'E_INTERNAL', message: 'socket closed (1006)' },
      });
      const counts = { passed: 1, failed: 1, skipped: 1, total: 3 };
      expect(finishCall(h.calls)).to.deep.equal({
        runId: 'otr_1',
        outcomes: [lost(1, 'error'), lost(2, 'skip')],
        status: 'error',
        reason: 'socket closed (1006)',
        counts,
      });
      expect(types(h.calls)).to.deep.equal([
        'sendRunStart',
        'sendStepExec',
        'recordSteps',
        'sendStepExec',
        'finishRun',
      ]);
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'socket closed (1006)', counts });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('during a pending write: waits for it, then the later steps skip with E_INTERNAL', async () => {
      const write = deferred();
      const h = track(start(runInput([step(0, 0), step(1, 0), step(2, 1)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'heartbeat stopped' });
      await flush();
      expect(h.actor.getSnapshot().value).to.equal('recording');
      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps', 'finishRun']);
      const finish = finishCall(h.calls);
      expect(finish.outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_INTERNAL'],
        [2, 'skip', 'E_INTERNAL'],
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'error',
        reason: 'heartbeat stopped',
        counts: { passed: 1, failed: 0, skipped: 2, total: 3 },
      });
      expectEachRecordedOnce(h.calls, 3);
    });

    it('during a pending write (after a CANCEL): no step in flight, no run.cancel, no run.finished', async () => {
      const write = deferred();
      const h = track(start(runInput([step(0, 0), step(1, 0)]), { record: () => write.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'user' });
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'gone' });
      write.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'recordSteps', 'finishRun']);
      expect(finishCall(h.calls).outcomes.map((o) => [o.stepIndex, o.status, o.error?.code])).to.deep.equal([
        [1, 'skip', 'E_CANCELLED'],
      ]);
      // The CANCEL came first, so the run is cancelled; the executor is gone, so nothing is sent.
      expect(expectDone(h).status).to.equal('cancelled');
    });

    it('while finishing: no run.finished', async () => {
      const finish = deferred();
      const h = track(start(runInput([step(0, 0)]), { finish: () => finish.promise }));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.actor.send({ type: 'EXECUTOR_LOST', reason: 'gone' });
      finish.resolve();
      await flush();
      expect(types(h.calls)).to.deep.equal(['sendRunStart', 'sendStepExec', 'finishRun']);
      expect(expectDone(h).status).to.equal('passed');
    });
  });

  describe('write failures', () => {
    it('a rejected recordSteps ends the run as error; its batch and the rest go to finishRun', async () => {
      const h = track(
        start(runInput([step(0, 0), step(1, 0), step(2, 1)]), {
          record: () => Promise.reject(new Error('db down')),
        }),
      );
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      expect(execs(h.calls), 'nothing more is sent').to.deep.equal([0]);
      const finish = finishCall(h.calls);
      expect(finish.status).to.equal('error');
      expect(finish.reason).to.equal('db down');
      expect(finish.outcomes).to.deep.equal([
        { stepIndex: 0, status: 'pass', source: 'executor' },
        {
          stepIndex: 1,
          status: 'skip',
          source: 'service',
          error: { code: 'E_INTERNAL', message: 'run stopped: db down' },
        },
        {
          stepIndex: 2,
          status: 'skip',
          source: 'service',
          error: { code: 'E_INTERNAL', message: 'run stopped: db down' },
        },
      ]);
      const counts = { passed: 1, failed: 0, skipped: 2, total: 3 };
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'error', reason: 'db down', counts },
      });
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'db down', counts });
    });

    it('a rejected finishRun still ends the run, as error', async () => {
      const h = track(
        start(runInput([step(0, 0)]), { finish: () => Promise.reject(new Error('disk full')) }),
      );
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      const counts = { passed: 1, failed: 0, skipped: 0, total: 1 };
      expect(expectDone(h)).to.deep.equal({ status: 'error', reason: 'disk full', counts });
      expect(h.calls.at(-1)).to.deep.equal({
        type: 'sendRunFinished',
        params: { runId: 'otr_1', status: 'error', reason: 'disk full', counts },
      });
    });
  });

  describe('each step recorded exactly once (rule 8)', () => {
    it('holds over a long run mixing every path', async () => {
      const steps = [
        step(0, 0),
        step(1, 0, { action: { action: 'eval', script: 'x' } }), // capability skip
        step(2, 0, { continueOnFail: true, timeoutMs: 10 }), // times out, continues
        step(3, 0), // fails: 4 skipped
        step(4, 0),
        step(5, 1),
        step(6, 1, { action: { action: 'screenshot' } }),
        step(7, 2), // cancelled in flight
        step(8, 2),
      ];
      const h = track(start(runInput(steps, { capabilities: { eval: false, screenshot: true }, graceMs: 0 })));
      h.result({ stepIndex: 0, status: 'pass' });
      await flush();
      h.clock.increment(10);
      await flush();
      h.result({ stepIndex: 2, status: 'pass' }); // late: rejected
      h.result({ stepIndex: 3, status: 'fail' });
      await flush();
      h.result({ stepIndex: 5, status: 'pass' });
      await flush();
      h.result({ stepIndex: 6, status: 'pass' });
      await flush();
      h.actor.send({ type: 'CANCEL', reason: 'enough' });
      await flush();
      expect(execs(h.calls)).to.deep.equal([0, 2, 3, 5, 6, 7]);
      expectEachRecordedOnce(h.calls, 9);
      const summary = [...outcomeByIndex(h.calls).values()]
        .sort((a, b) => a.stepIndex - b.stepIndex)
        .map((o) => `${o.stepIndex}:${o.status}:${o.error?.code ?? '-'}`);
      expect(summary).to.deep.equal([
        '0:pass:-',
        '1:skip:E_CAPABILITY',
        '2:error:E_TIMEOUT',
        '3:fail:-',
        '4:skip:E_SKIPPED',
        '5:pass:-',
        '6:pass:-',
        '7:skip:E_CANCELLED',
        '8:skip:E_CANCELLED',
      ]);
      expect(expectDone(h)).to.deep.equal({
        status: 'cancelled',
        reason: 'enough',
        counts: { passed: 3, failed: 2, skipped: 4, total: 9 },
      });
    });
  });
});
