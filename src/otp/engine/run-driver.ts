// Drives one claimed run: the run machine, and the effects it requests carried out (frames to the
// executor, durable writes to PostgreSQL).
import { createActor, type Actor } from 'xstate';
import { runMachine } from '../../../machines/run.machine.js';
import { answer } from '../../../machines/effects.js';
import type { RunEffect, RunEvent, RunOutput, StepExecPayload, StepOutcome, StepReport } from '../../../machines/types.js';
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

const needsEvidenceCheck = (outcomes: StepOutcome[]) => outcomes.some((o) => o.evidence?.screenshotAssetId);

type Effect<T extends RunEffect['type']> = Extract<RunEffect, { type: T }>;

export class RunDriver {
  readonly id: string;
  readonly done: Promise<RunOutput>;
  private readonly actor: Actor<typeof runMachine>;
  private readonly fields: { sessionId: string; runId: string };
  private readonly send: (event: RunEvent) => void;
  private rejectDone!: (err: unknown) => void;
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
    // One machine for every run: each driver only listens to its own actor's effects.
    this.actor = createActor(runMachine, {
      input: { runId: run.id, steps: run.steps, capabilities, vars: run.vars, graceMs: deps.graceMs },
    });
    this.send = this.actor.send;
    this.done = new Promise<RunOutput>((resolve, reject) => {
      this.rejectDone = reject;
      this.actor.subscribe({
        complete: () => resolve(this.actor.getSnapshot().output as RunOutput),
        error: (err) => {
          deps.log.error('run actor failed', { runId: run.id, err });
          reject(err);
        },
      });
    });
    this.actor.on('*', (effect) => this.carryOut(effect));
  }

  /** Every effect the run machine requests arrives here, in the order the machine decided them. */
  private carryOut(effect: RunEffect): void {
    try {
      switch (effect.type) {
        case 'sendRunStart':
          return this.sendRunStart();
        case 'sendStepExec':
          return this.sendStepExec(effect.payload);
        case 'recordSteps':
          return this.recordSteps(effect);
        case 'sendRunCancel':
          return this.sendRunCancel(effect.reason);
        case 'finishRun':
          return this.finishRun(effect);
        case 'sendRunFinished':
          return this.sendRunFinished(effect);
        case 'rejectStepResult':
          return this.rejectStepResult(effect.stepIndex, effect.reason, effect.ref);
      }
    } catch (err) {
      // An effect that throws stops the run, as a failed actor would.
      this.deps.log.error('run effect failed', { runId: this.run.id, effect: effect.type, err });
      this.rejectDone(err);
      this.actor.stop();
    }
  }

  private sendRunStart(): void {
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

  private sendStepExec(payload: StepExecPayload): void {
    this.channel.send(buildFrame('step.exec', this.fields, payload));
    if (this.resultAt !== undefined && stepDispatch.hasSubscribers) {
      const message: StepDispatchMessage = { runId: this.run.id, stepIndex: payload.stepIndex, ms: performance.now() - this.resultAt };
      stepDispatch.publish(message);
    }
    this.resultAt = undefined;
  }

  private sendRunCancel(reason: string): void {
    this.channel.send(buildFrame('run.cancel', this.fields, { runId: this.run.id, reason }));
  }

  private sendRunFinished(output: RunOutput): void {
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

  private rejectStepResult(stepIndex: number, reason: string, ref?: string): void {
    this.resultAt = undefined;
    this.channel.send(errorFrame('E_UNEXPECTED', `step.result for step ${stepIndex} rejected: ${reason}`, { ...this.fields, ref }));
  }

  /** Writes the batch, then answers the machine: STEPS_RECORDED, or STEPS_NOT_RECORDED with the reason. */
  private recordSteps({ runId, outcomes }: Effect<'recordSteps'>): void {
    const write = (checked: StepOutcome[]) => this.deps.writer.write(checked.map((outcome) => ({ runId, outcome })));
    // Without evidence to check (nearly every step), the write starts in this tick.
    const written = needsEvidenceCheck(outcomes) && this.deps.verifyEvidence
      ? this.deps.verifyEvidence(runId, outcomes).then(write)
      : write(outcomes);
    answer<RunEvent>(written, this.send, { type: 'STEPS_RECORDED' }, (message) => ({ type: 'STEPS_NOT_RECORDED', message }));
  }

  /** Writes the last outcomes and the verdict, then answers: RUN_FINISH_WRITTEN, or RUN_FINISH_FAILED with the reason. */
  private finishRun(effect: Effect<'finishRun'>): void {
    answer<RunEvent>(this.writeFinish(effect), this.send, { type: 'RUN_FINISH_WRITTEN' }, (message) => ({ type: 'RUN_FINISH_FAILED', message }));
  }

  private async writeFinish({ runId, outcomes, status, counts, reason }: Effect<'finishRun'>): Promise<void> {
    const { deps } = this;
    const verified = await this.verified(runId, outcomes);
    this.durationMs = await deps.store.finishRun({ runId, status, counts, reason, outcomes: verified });
    await deps.onFinished?.(runId).catch((err) => deps.log.error('after-run hook failed', { runId, err }));
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
