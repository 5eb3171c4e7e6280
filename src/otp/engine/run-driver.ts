// Drives one claimed run: the run machine with its effects supplied (frames to the executor,
// durable writes to PostgreSQL).
import { createActor, fromPromise, type ActorRefFrom } from 'xstate';
import { runMachine } from '../../../machines/run.machine.js';
import type { FinishRunInput, RecordStepsInput, RunOutput, StepExecPayload, StepOutcome, StepReport } from '../../../machines/types.js';
import { buildFrame, errorFrame } from '../protocol/frames.js';
import { stepDispatch, type StepDispatchMessage } from './diagnostics.js';
import type { ClaimedRun, RunStore } from '../store/run-store.js';
import type { StepWriter } from './step-writer.js';
import type { Logger } from '../../log.js';

export interface RunChannel {
  /** The session id. */
  readonly id: string;
  send(frame: string): void;
}

export interface RunDriverDeps {
  store: RunStore;
  /** Checks the evidence references of outcomes before they are written (assets belong to the run). */
  verifyEvidence?: (runId: string, outcomes: StepOutcome[]) => Promise<StepOutcome[]>;
  /** Called once the run's verdict is durable (e.g. to record test results). */
  onFinished?: (runId: string) => Promise<void>;
  writer: StepWriter;
  log: Logger;
  graceMs: number;
  stepTimeoutMs: number;
}

// One machine with its effects for every run, made once (`machine.provide()` builds a whole new
// machine, a cost worth sparing per run). Each effect finds its driver through the actor system of
// the run's actor.
const driversBySystem = new WeakMap<object, RunDriver>();
const driverOf = (system: object): RunDriver => driversBySystem.get(system)!;

const runMachineWithEffects = runMachine.provide({
  actions: {
    sendRunStart: ({ system }) => driverOf(system).sendRunStart(),
    sendStepExec: ({ system }, payload) => driverOf(system).sendStepExec(payload),
    recordSteps: ({ system }, input) => driverOf(system).recordSteps(input),
    sendRunCancel: ({ system }, { reason }) => driverOf(system).sendRunCancel(reason),
    sendRunFinished: ({ system }, output) => driverOf(system).sendRunFinished(output),
    rejectStepResult: ({ system }, { stepIndex, reason, ref }) => driverOf(system).rejectStepResult(stepIndex, reason, ref),
  },
  actors: {
    finishRun: fromPromise<void, FinishRunInput>(({ input, system }) => driverOf(system).finishRun(input)),
  },
});

const needsEvidenceCheck = (outcomes: StepOutcome[]) => outcomes.some((o) => o.evidence?.screenshotAssetId);

export class RunDriver {
  readonly id: string;
  readonly done: Promise<RunOutput>;
  private readonly actor: ActorRefFrom<typeof runMachine>;
  private readonly fields: { sessionId: string; runId: string };
  private durationMs = 0;
  // When the step.result now being acted on arrived; cleared by the step.exec it leads to, or its refusal.
  private resultAt: number | undefined;

  constructor(
    private readonly run: ClaimedRun,
    private readonly channel: RunChannel,
    private readonly deps: RunDriverDeps,
    capabilities: Record<string, unknown>,
  ) {
    this.id = run.id;
    this.fields = { sessionId: channel.id, runId: run.id };
    this.actor = createActor(runMachineWithEffects, {
      input: { runId: run.id, steps: run.steps, capabilities, vars: run.vars, graceMs: deps.graceMs },
    });
    driversBySystem.set(this.actor.system, this);
    this.done = new Promise<RunOutput>((resolve, reject) => {
      this.actor.subscribe({
        complete: () => resolve(this.actor.getSnapshot().output as RunOutput),
        error: (err) => {
          deps.log.error('run actor failed', { runId: run.id, err });
          reject(err);
        },
      });
    });
  }

  // ---- effects of the run machine (see runMachineWithEffects) ----

  sendRunStart(): void {
    const { run, deps } = this;
    this.channel.send(
      buildFrame('run.start', this.fields, {
        runId: run.id,
        vars: run.vars,
        allowedOrigins: run.allowedOrigins,
        testCases: run.testCases,
        totalSteps: run.steps.length,
        defaults: { stepTimeoutMs: deps.stepTimeoutMs },
      }),
    );
  }

  sendStepExec(payload: StepExecPayload): void {
    this.channel.send(buildFrame('step.exec', this.fields, payload));
    if (this.resultAt !== undefined && stepDispatch.hasSubscribers) {
      const message: StepDispatchMessage = { runId: this.run.id, stepIndex: payload.stepIndex, ms: performance.now() - this.resultAt };
      stepDispatch.publish(message);
    }
    this.resultAt = undefined;
  }

  sendRunCancel(reason: string): void {
    this.channel.send(buildFrame('run.cancel', this.fields, { runId: this.run.id, reason }));
  }

  sendRunFinished(output: RunOutput): void {
    this.channel.send(
      buildFrame('run.finished', this.fields, {
        runId: this.run.id,
        status: output.status,
        ...output.counts,
        durationMs: this.durationMs,
        ...(output.reason ? { reason: output.reason } : {}),
      }),
    );
  }

  rejectStepResult(stepIndex: number, reason: string, ref?: string): void {
    this.resultAt = undefined;
    this.channel.send(errorFrame('E_UNEXPECTED', `step.result for step ${stepIndex} rejected: ${reason}`, { ...this.fields, ref }));
  }

  /** Writes the batch, then answers the machine: STEPS_RECORDED, or STEPS_NOT_RECORDED with the reason. */
  recordSteps({ runId, outcomes }: RecordStepsInput): void {
    const write = (checked: StepOutcome[]) => this.deps.writer.write(checked.map((outcome) => ({ runId, outcome })));
    // Without evidence to check (nearly every step), the write starts in this tick.
    const written = needsEvidenceCheck(outcomes) && this.deps.verifyEvidence
      ? this.deps.verifyEvidence(runId, outcomes).then(write)
      : write(outcomes);
    written.then(
      () => this.actor.send({ type: 'STEPS_RECORDED' }),
      (err: unknown) => this.actor.send({ type: 'STEPS_NOT_RECORDED', message: err instanceof Error ? err.message : String(err) }),
    );
  }

  async finishRun(input: FinishRunInput): Promise<void> {
    const { deps } = this;
    const outcomes = await this.verified(input.runId, input.outcomes);
    this.durationMs = await deps.store.finishRun({ ...input, outcomes });
    await deps.onFinished?.(input.runId).catch((err) => deps.log.error('after-run hook failed', { runId: input.runId, err }));
  }

  private async verified(runId: string, outcomes: StepOutcome[]): Promise<StepOutcome[]> {
    const { deps } = this;
    return needsEvidenceCheck(outcomes) && deps.verifyEvidence ? deps.verifyEvidence(runId, outcomes) : outcomes;
  }

  start(): void {
    this.actor.start();
  }

  /** `receivedAt`: when the frame arrived (performance.now()), for the dispatch latency (see diagnostics.ts). */
  stepResult(report: StepReport, ref?: string, receivedAt?: number): void {
    this.resultAt = receivedAt;
    this.actor.send({ type: 'STEP_RESULT', report, ref });
  }

  cancel(reason = 'cancelled by request'): void {
    this.actor.send({ type: 'CANCEL', reason });
  }

  executorLost(reason: string): void {
    this.actor.send({ type: 'EXECUTOR_LOST', reason });
  }
}
