// Diagnostics channels (node:diagnostics_channel) of the run engine: what an operator's tooling or
// the benchmark harness can subscribe to in the process. Nothing is built or published while no one
// listens.
import diagnostics from 'node:diagnostics_channel';

export interface StepDispatchMessage {
  runId: string;
  /** The step sent. */
  stepIndex: number;
  /** From the previous step's step.result arriving in the process to this step.exec leaving it. */
  ms: number;
}

/** One message per step.exec that follows a step.result: the engine's dispatch latency. */
export const stepDispatch = diagnostics.channel('otp:step.dispatch');

/** One message per group-commit statement of step results: published by the store that writes them. */
export { type StepWriteMessage, stepWrite } from '../store/run-store.js';

export interface RunClaimMessage {
  sessionId: string;
  /** Runs the session had room for. */
  wanted: number;
  /** Queued runs the statement claimed for it. */
  claimed: number;
  ms: number;
}

/** One message per claim statement: how often the engine asks PostgreSQL for queued runs. */
export const runClaim = diagnostics.channel('otp:run.claim');

/**
 * What the engine tells an observer of this process (metrics, see src/observability/): unlike the
 * channels above, which are global to the Node process, these belong to one service.
 */
export interface EngineEvents {
  sessionOpened(): void;
  sessionClosed(code: number): void;
  runClaimed(): void;
  runFinished(status: string, durationMs: number): void;
}
