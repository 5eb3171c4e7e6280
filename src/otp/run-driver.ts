// Drives one claimed run: the run machine with its effects supplied (frames to the executor,
// durable writes to PostgreSQL).
import { createActor, fromPromise, type ActorRefFrom } from 'xstate';
import { runMachine } from '../../machines/run.machine.js';
import type { FinishRunInput, RecordStepsInput, RunOutput, StepOutcome, StepReport } from '../../machines/types.js';
import { buildFrame, errorFrame } from './frames.js';
import type { ClaimedRun, RunStore } from './run-store.js';
import type { StepWriter } from './step-writer.js';
import type { Logger } from '../log.js';

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

export class RunDriver {
  readonly id: string;
  readonly done: Promise<RunOutput>;
  private readonly actor: ActorRefFrom<typeof runMachine>;
  private durationMs = 0;

  constructor(run: ClaimedRun, channel: RunChannel, deps: RunDriverDeps, capabilities: Record<string, unknown>) {
    this.id = run.id;
    const fields = { sessionId: channel.id, runId: run.id };
    const machine = runMachine.provide({
      actions: {
        sendRunStart: () =>
          channel.send(
            buildFrame('run.start', fields, {
              runId: run.id,
              vars: run.vars,
              allowedOrigins: run.allowedOrigins,
              testCases: run.testCases,
              totalSteps: run.steps.length,
              defaults: { stepTimeoutMs: deps.stepTimeoutMs },
            }),
          ),
        sendStepExec: (_, payload) => channel.send(buildFrame('step.exec', fields, payload)),
        sendRunCancel: (_, { reason }) => channel.send(buildFrame('run.cancel', fields, { runId: run.id, reason })),
        sendRunFinished: (_, output) =>
          channel.send(
            buildFrame('run.finished', fields, {
              runId: run.id,
              status: output.status,
              ...output.counts,
              durationMs: this.durationMs,
              ...(output.reason ? { reason: output.reason } : {}),
            }),
          ),
        rejectStepResult: (_, { stepIndex, reason, ref }) =>
          channel.send(errorFrame('E_UNEXPECTED', `step.result for step ${stepIndex} rejected: ${reason}`, { ...fields, ref })),
      },
      actors: {
        recordSteps: fromPromise<void, RecordStepsInput>(async ({ input }) => {
          const outcomes = await this.verified(input.runId, input.outcomes, deps);
          await deps.writer.write(outcomes.map((outcome) => ({ runId: input.runId, outcome })));
        }),
        finishRun: fromPromise<void, FinishRunInput>(async ({ input }) => {
          const outcomes = await this.verified(input.runId, input.outcomes, deps);
          this.durationMs = await deps.store.finishRun({ ...input, outcomes });
          await deps.onFinished?.(input.runId).catch((err) => deps.log.error('after-run hook failed', { runId: input.runId, err }));
        }),
      },
    });
    this.actor = createActor(machine, {
      input: { runId: run.id, steps: run.steps, capabilities, vars: run.vars, graceMs: deps.graceMs },
    });
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

  private async verified(runId: string, outcomes: StepOutcome[], deps: RunDriverDeps): Promise<StepOutcome[]> {
    const withEvidence = outcomes.some((o) => o.evidence?.screenshotAssetId);
    return withEvidence && deps.verifyEvidence ? deps.verifyEvidence(runId, outcomes) : outcomes;
  }

  start(): void {
    this.actor.start();
  }

  stepResult(report: StepReport, ref?: string): void {
    this.actor.send({ type: 'STEP_RESULT', report, ref });
  }

  cancel(reason = 'cancelled by request'): void {
    this.actor.send({ type: 'CANCEL', reason });
  }

  executorLost(reason: string): void {
    this.actor.send({ type: 'EXECUTOR_LOST', reason });
  }
}
