// Types shared by the session and run machines and by the code in src/ that drives them.
// This folder is pure: it imports only xstate and these types.

export type CapabilityName = 'record' | 'replay' | 'screenshot' | 'upload' | 'crossOrigin' | 'eval';

/** hello.capabilities as the executor declared them. */
export interface Capabilities {
  record?: boolean;
  replay?: boolean;
  screenshot?: boolean;
  upload?: boolean;
  crossOrigin?: boolean;
  eval?: boolean;
  maxParallel?: number;
}

/** A step.action (spec 2.6/2.7): `action` names it, the other members are its parameters. */
export interface StepAction {
  action: string;
  [param: string]: unknown;
}

/** One step of a run, fixed when the run is created. */
export interface PlannedStep {
  /** Position in the whole run, 0-based; the stepIndex of step.exec and step.result. */
  stepIndex: number;
  /** Which test case of the run the step belongs to (index into the run's testCases). */
  caseIndex: number;
  /** The action as written in the test case; {{name}} variables are filled when it is sent. */
  action: StepAction;
  timeoutMs: number;
  continueOnFail: boolean;
  evidence?: string;
  label?: string;
}

/** What a step ends as; a step not yet decided is stored as `pending`. */
export const STEP_STATUSES = ['pass', 'fail', 'skip', 'error'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** How a run ends. The one list of run statuses: schemas, queries and the cache take theirs from here. */
export const FINAL_RUN_STATUSES = ['passed', 'failed', 'cancelled', 'error'] as const;
export type FinalRunStatus = (typeof FINAL_RUN_STATUSES)[number];
/** A run is `queued` until a session claims it, `running` until its verdict is durable. */
export const ACTIVE_RUN_STATUSES = ['queued', 'running'] as const;
export const RUN_STATUSES = [...ACTIVE_RUN_STATUSES, ...FINAL_RUN_STATUSES] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** True once a run has its verdict: it never changes again. */
export function isFinalRunStatus(status: string): status is FinalRunStatus {
  return (FINAL_RUN_STATUSES as readonly string[]).includes(status);
}

export interface StepError {
  code: string;
  message: string;
  triedLocators?: unknown[];
}

/** A step.result payload as the executor sent it (already schema-validated). */
export interface StepReport {
  stepIndex: number;
  status: StepStatus;
  durationMs?: number;
  error?: StepError;
  /** `note` is the service's: why a screenshotAssetId the executor sent was not recorded. */
  evidence?: { screenshotAssetId?: string; consoleErrors?: string[]; note?: string };
  actual?: string;
  usedLocator?: unknown;
}

/** What is recorded for one step: the executor's report, or the service's own verdict. */
export interface StepOutcome extends StepReport {
  /** 'executor' when it came in a step.result; 'service' for skips, time-outs, cancels, losses. */
  source: 'executor' | 'service';
}

/** step.exec payload (spec 2.5). */
export interface StepExecPayload {
  stepIndex: number;
  timeoutMs: number;
  continueOnFail: boolean;
  evidence?: string;
  label?: string;
  step: StepAction;
}

export interface RunCounts {
  passed: number;
  /** Steps that failed or errored (time-outs included). */
  failed: number;
  skipped: number;
  total: number;
}

export interface RunInput {
  runId: string;
  steps: PlannedStep[];
  capabilities: Capabilities;
  vars: Record<string, string>;
  /** Added to a step's timeoutMs before the service gives up on it. */
  graceMs: number;
}

export interface RunOutput {
  status: FinalRunStatus;
  counts: RunCounts;
  /** Why the run ended as it did, for cancelled and error runs. */
  reason?: string;
}

export type RunEvent =
  | { type: 'STEP_RESULT'; report: StepReport; /** Id of the step.result frame, echoed when it is refused. */ ref?: string }
  | { type: 'CANCEL'; reason?: string }
  | { type: 'EXECUTOR_LOST'; reason: string }
  // The answer to the recordSteps action, from whoever carries it out: the batch is durable, or it
  // is not (nothing of it was written).
  | { type: 'STEPS_RECORDED' }
  | { type: 'STEPS_NOT_RECORDED'; message: string };

/** Params of the run machine's sendRunStart action. */
export interface RunStartParams {
  runId: string;
}

/** Params of the run machine's sendRunCancel action. */
export interface RunCancelParams {
  runId: string;
  reason: string;
}

/** Params of the run machine's sendRunFinished action. */
export type RunFinishedParams = RunOutput & { runId: string };

/** Params of the run machine's rejectStepResult action: a step.result for a step not in flight. */
export interface RejectStepResultParams {
  stepIndex: number;
  reason: string;
  ref?: string;
}

/** Input of the recordSteps actor: outcomes to make durable before the run moves on. */
export interface RecordStepsInput {
  runId: string;
  outcomes: StepOutcome[];
}

/** Input of the finishRun actor: the last outcomes and the run's verdict, written together. */
export interface FinishRunInput extends RunOutput {
  runId: string;
  outcomes: StepOutcome[];
}

export interface SessionInput {
  keepaliveMs: number;
  pongTimeoutMs: number;
  helloTimeoutMs: number;
  /** Invalid frames in a row that close the session. */
  maxInvalidFrames: number;
}

export interface HelloPayload {
  executor: string;
  name?: string;
  version?: string;
  capabilities: Capabilities;
  projectId?: string;
}

export type SessionEvent =
  | { type: 'HELLO'; hello: HelloPayload; ref: string }
  | { type: 'PONG' }
  | { type: 'FRAME_VALID' }
  | { type: 'FRAME_INVALID'; message: string }
  | { type: 'CLOSE'; code: number; reason: string }
  | { type: 'SOCKET_CLOSED'; code: number; reason: string };

/** Input of the session machine's registerSession actor. */
export interface RegisterSessionInput {
  hello: HelloPayload;
}

export interface SessionOutput {
  code: number;
  reason: string;
}

/** WebSocket close codes the service uses (documented in docs/protocol.md). */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  tooBig: 1009,
  protocolViolation: 4400,
  unauthorized: 4401,
  forbidden: 4403,
  timeout: 4408,
  version: 4426,
  /** The service failed on its side (e.g. the session could not be stored). */
  internalError: 1011,
} as const;

/** Error codes of OTP (spec 7.1) plus the protocol-level ones this service adds. */
export const OtpErrorCode = {
  auth: 'E_AUTH',
  version: 'E_VERSION',
  capability: 'E_CAPABILITY',
  locatorNotFound: 'E_LOCATOR_NOT_FOUND',
  timeout: 'E_TIMEOUT',
  assertFailed: 'E_ASSERT_FAILED',
  navigationBlocked: 'E_NAVIGATION_BLOCKED',
  cancelled: 'E_CANCELLED',
  internal: 'E_INTERNAL',
  /** Not JSON, not an object, or fails its message schema. */
  invalidFrame: 'E_INVALID_FRAME',
  /** A well-formed frame that makes no sense now (a result for a step not in flight, a second hello). */
  unexpected: 'E_UNEXPECTED',
  /** Skipped because an earlier step of the same test case failed under continueOnFail false. */
  skipped: 'E_SKIPPED',
} as const;
