// Drives one claimed run: the run machine, and the effects it requests carried out (frames to the
// executor, durable writes to PostgreSQL).
import { type Actor, createActor } from 'xstate';
import { runMachine } from '../../../machines/run.machine.js';
import {
  CANCELLED_BY_REQUEST,
  OtpErrorCode,
  type RunEffect,
  type RunOutput,
  type StepExecPayload,
  type StepOutcome,
  type StepReport,
} from '../../../machines/types.js';
import type { DatabaseHealth } from '../../db/health.js';
import type { Logger } from '../../log.js';
import { buildFrame, errorFrame, frameTemplate } from '../protocol/frames.js';
import type { ClaimedRun, RunStore } from '../store/run-store.js';
import { TRACE_LIMIT } from '../store/run-trace.js';
import { type StepDispatchMessage, stepDispatch } from './diagnostics.js';
import { DurableWrites } from './durable-writes.js';
import { RunTracer } from './run-tracer.js';
import type { Clock } from './timer-wheel.js';

export interface RunChannel {
  /** The session id. */
  readonly id: string;
  /** The session waits to be resumed: a run started now starts paused. */
  readonly detached?: boolean;
  send(frame: string): void;
}

export interface RunDriverDeps {
  store: RunStore;
  /** Checks the evidence references of outcomes before they are written (assets belong to the run). */
  verifyEvidence?: (runId: string, outcomes: StepOutcome[]) => Promise<StepOutcome[]>;
  /** Called once the verdict is durable, for a run that owes test results (it has a test run). */
  onFinished?: (runId: string) => Promise<void>;
  log: Logger;
  graceMs: number;
  stepTimeoutMs: number;
  /** Where the machine's delays (the step time-out) are scheduled; Node's timers when none. */
  clock?: Clock;
  /** Told after every transition of the run machine (the console's live pages in this process). */
  changed?: (runId: string, projectId: string) => void;
  /** Where a write that meets an outage waits for the database; without it, an outage fails the write. */
  health?: DatabaseHealth;
  /** How long a write may wait for the database before the run ends (E_DATABASE_UNAVAILABLE). */
  outageWindowMs?: number;
}

const needsEvidenceCheck = (outcomes: StepOutcome[]) => outcomes.some((o) => o.evidence?.screenshotAssetId);

type Effect<T extends RunEffect['type']> = Extract<RunEffect, { type: T }>;

export class RunDriver {
  readonly id: string;
  readonly done: Promise<RunOutput>;
  /** Handed to another process (release()): this one stopped driving it, nothing was decided. */
  released = false;
  private started = false;
  private readonly actor: Actor<typeof runMachine>;
  private readonly fields: { sessionId: string; runId: string };
  private readonly stepExecFrame: (payload: StepExecPayload) => string;
  private readonly writes: DurableWrites;
  private rejectDone!: (err: unknown) => void;
  private duration = 0;
  // When the step.result now being acted on arrived; cleared by the step.exec it leads to, or its refusal.
  private resultAt: number | undefined;
  /** The machine's transitions (run-tracer.ts), flushed by the engine and written with the verdict. */
  readonly trace: RunTracer;
  // The last step.exec sent: sent again as is (same id) when the machine sends that step again after a resume.
  private lastExec: { stepIndex: number; attempt: number | undefined; frame: string } | undefined;

  constructor(
    private readonly run: ClaimedRun & { recorded?: StepOutcome[]; attempts?: number[] },
    private readonly channel: RunChannel,
    private readonly deps: RunDriverDeps,
    capabilities: Record<string, unknown>,
  ) {
    this.id = run.id;
    this.fields = { sessionId: channel.id, runId: run.id };
    this.trace = new RunTracer(run.id, () => deps.changed?.(run.id, run.projectId));
    this.stepExecFrame = frameTemplate('step.exec', this.fields);
    // One machine for every run: each driver only listens to its own actor's effects.
    this.actor = createActor(runMachine, {
      input: {
        runId: run.id,
        steps: run.steps,
        capabilities,
        vars: run.vars,
        graceMs: deps.graceMs,
        ...(run.testCases.some((c) => c.retries) ? { retries: run.testCases.map((c) => c.retries ?? 0) } : {}),
        ...(run.attempts ? { attempts: run.attempts } : {}),
        ...(deps.outageWindowMs !== undefined ? { outageWindowMs: deps.outageWindowMs } : {}),
        ...(run.recorded ? { recorded: run.recorded } : {}),
        ...(channel.detached ? { detached: true } : {}),
        ...quarantinedInput(run.testCases),
      },
      ...(deps.clock ? { clock: deps.clock } : {}),
      // Microsteps only: each carries the transitions taken (eventless and delayed ones included).
      inspect: this.trace.inspect,
    });
    this.trace.follow(this.actor);
    this.writes = new DurableWrites(this.actor.send, () => this.actor.getSnapshot().status === 'active', deps.health);
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

  get projectId(): string {
    return this.run.projectId;
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
        testCases: run.testCases.map(({ id, title, steps, retries }) => ({
          id,
          title,
          steps,
          ...(retries ? { retries } : {}),
        })),
        totalSteps: run.steps.length,
        defaults: { stepTimeoutMs: deps.stepTimeoutMs },
      }),
    );
  }

  private sendStepExec(payload: StepExecPayload): void {
    // The same step again (the session was resumed): the same frame (same id); a new attempt is a new one.
    const last = this.lastExec;
    if (last?.stepIndex === payload.stepIndex && last.attempt === payload.attempt) return this.channel.send(last.frame);
    const frame = this.stepExecFrame(payload);
    this.lastExec = { stepIndex: payload.stepIndex, attempt: payload.attempt, frame };
    this.channel.send(frame);
    if (this.resultAt !== undefined && stepDispatch.hasSubscribers) {
      const message: StepDispatchMessage = {
        runId: this.run.id,
        stepIndex: payload.stepIndex,
        ms: performance.now() - this.resultAt,
      };
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
        durationMs: this.duration,
        ...(output.reason ? { reason: output.reason } : {}),
        ...(output.flaky !== undefined ? { flaky: output.flaky } : {}),
        ...quarantinedIds(this.run.testCases),
      }),
    );
  }

  private rejectStepResult(stepIndex: number, reason: string, ref?: string): void {
    this.resultAt = undefined;
    this.channel.send(
      errorFrame('E_UNEXPECTED', `step.result for step ${stepIndex} rejected: ${reason}`, { ...this.fields, ref }),
    );
  }

  /** Writes the batch, then answers the machine (durable-writes.ts): STEPS_RECORDED, or STEPS_NOT_RECORDED with the reason. */
  private recordSteps({ runId, outcomes, retry }: Effect<'recordSteps'>): void {
    const write = (checked: StepOutcome[]) => {
      const writes = checked.map((outcome) => ({ runId, outcome }));
      return retry ? this.deps.store.retryCase(runId, writes, retry) : this.deps.store.writeSteps(writes);
    };
    // Without evidence to check (nearly every step), the write starts in this tick.
    const attempt = () =>
      needsEvidenceCheck(outcomes) && this.deps.verifyEvidence
        ? this.deps.verifyEvidence(runId, outcomes).then(write)
        : write(outcomes);
    this.writes.carryOut(attempt, { type: 'STEPS_RECORDED' }, (message) => ({ type: 'STEPS_NOT_RECORDED', message }));
  }

  /** Writes the last outcomes and the verdict, then answers: RUN_FINISH_WRITTEN, or RUN_FINISH_FAILED with the reason. */
  private finishRun(effect: Effect<'finishRun'>): void {
    this.writes.carryOut(
      () => this.writeFinish(effect),
      { type: 'RUN_FINISH_WRITTEN' },
      (message) => ({ type: 'RUN_FINISH_FAILED', message }),
    );
  }

  private async writeFinish({ runId, outcomes, status, counts, reason }: Effect<'finishRun'>): Promise<void> {
    const { deps } = this;
    let finished: { durationMs: number; owesResults: boolean };
    try {
      const verified = await this.verified(runId, outcomes);
      // The trace goes with the verdict, ending in the transition this very write leads to when it
      // commits (a failed write commits nothing, its trace included), as the machine would take it.
      const trace = this.trace.snapshot();
      const last = this.trace.next(this.actor, { type: 'RUN_FINISH_WRITTEN' }, this.run.steps.length);
      const transitions = (last ? [...trace.transitions, last] : trace.transitions).slice(-TRACE_LIMIT);
      const dropped = trace.dropped + trace.transitions.length + (last ? 1 : 0) - transitions.length;
      finished = await deps.store.finishRun({
        runId,
        projectId: this.run.projectId,
        status,
        counts,
        reason,
        outcomes: verified,
        trace: { transitions, dropped },
      });
      this.duration = finished.durationMs;
    } catch (err) {
      // An outage: the write waits for the database and is tried again whole (answerDurable).
      if (!deps.health?.report(err)) await this.finishWithoutOutcomes(err, reason);
      throw err;
    }
    if (finished.owesResults)
      await deps.onFinished?.(runId).catch((err) => deps.log.error('after-run hook failed', { runId, err }));
  }

  /**
   * The verdict could not be written with its outcomes (a row PostgreSQL refused, a lost
   * connection): the run still ends `error` in the database with the reason, keeping the steps
   * already recorded and closing the others. When even that fails, the orphan check finishes it.
   */
  private async finishWithoutOutcomes(err: unknown, reason: string | undefined): Promise<void> {
    const { deps } = this;
    const message = err instanceof Error ? err.message : String(err);
    const why = `results could not be recorded: ${reason ?? message}`.slice(0, 1000);
    deps.log.error('run finish failed; finishing the run as error without its last outcomes', {
      runId: this.run.id,
      err,
    });
    await deps.store
      .finishUndriven([this.run.id], { status: 'error', code: OtpErrorCode.internal, reason: why })
      .catch((again) =>
        deps.log.error('could not finish the run; the orphan check will', { runId: this.run.id, err: again }),
      );
  }

  private async verified(runId: string, outcomes: StepOutcome[]): Promise<StepOutcome[]> {
    const { deps } = this;
    return needsEvidenceCheck(outcomes) && deps.verifyEvidence ? deps.verifyEvidence(runId, outcomes) : outcomes;
  }

  start(): void {
    this.started = true;
    this.actor.start();
  }

  /** The run's duration as written with its verdict (0 until then). */
  get durationMs(): number {
    return this.duration;
  }

  /** Resolves once no write is in flight: the run waits for a resume (`paused`) or is over. */
  quiet(): Promise<void> {
    const still = () => {
      const snapshot = this.actor.getSnapshot();
      return snapshot.status !== 'active' || snapshot.value === 'paused';
    };
    if (still()) return Promise.resolve();
    return new Promise((resolve) => {
      const subscription = this.actor.subscribe({
        next: () => {
          if (!still()) return;
          subscription.unsubscribe();
          resolve();
        },
        complete: () => resolve(),
        error: () => resolve(),
      });
    });
  }

  /** `receivedAt`: when the frame arrived (performance.now()), for the dispatch latency (see diagnostics.ts). */
  stepResult(report: StepReport, ref?: string, receivedAt?: number): void {
    this.resultAt = receivedAt;
    this.actor.send({ type: 'STEP_RESULT', report, ref });
  }

  cancel(reason = CANCELLED_BY_REQUEST): void {
    this.actor.send({ type: 'CANCEL', reason });
  }

  executorLost(reason: string): void {
    this.actor.send({ type: 'EXECUTOR_LOST', reason });
  }

  /** The session's socket dropped; it waits to be resumed. */
  detach(): void {
    this.actor.send({ type: 'EXECUTOR_DETACHED' });
  }

  /** The session was resumed: the step in flight goes out again. */
  resume(): void {
    // A run taken over from another process starts after the welcome; until then there is nothing to resume.
    if (this.started) this.actor.send({ type: 'EXECUTOR_RESUMED' });
  }

  /** Stops driving the run without deciding anything: another process drives it from now on (transfers.ts). */
  release(): void {
    this.released = true;
    this.actor.stop();
  }
}

/** The run machine's quarantinedCases (caseIndex of each quarantined test case), only when there is one. */
function quarantinedInput(testCases: ClaimedRun['testCases']): { quarantinedCases?: number[] } {
  const indexes = testCases.flatMap((testCase, caseIndex) => (testCase.quarantined ? [caseIndex] : []));
  return indexes.length ? { quarantinedCases: indexes } : {};
}

/** run.finished's quarantined: the ids of the run's quarantined test cases, only when there is one. */
function quarantinedIds(testCases: ClaimedRun['testCases']): { quarantined?: string[] } {
  const ids = testCases.flatMap((testCase) => (testCase.quarantined ? [testCase.id] : []));
  return ids.length ? { quarantined: ids } : {};
}
