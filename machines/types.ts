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

/** A step action (docs/protocol.md, "Step actions"): `action` names it, the other members are its parameters. */
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

/**
 * The step.result fields that hold text observed on the page, as `textReplaced` names them: the
 * protocol's list (src/otp/protocol/observed-text.ts cleans them), here so that every room that
 * describes a step may name them.
 */
export const OBSERVED_TEXT_FIELDS = ['actual', 'error.message', 'evidence.consoleErrors'] as const;
export type ObservedTextField = (typeof OBSERVED_TEXT_FIELDS)[number];

/** A step.result payload as the executor sent it (already schema-validated). */
export interface StepReport {
  stepIndex: number;
  status: StepStatus;
  durationMs?: number;
  error?: StepError;
  /** `note` is the service's: why a screenshotAssetId the executor sent was not recorded. */
  evidence?: {
    screenshotAssetId?: string;
    consoleErrors?: string[];
    /** The main document's navigations during the step (their HTTP status or error): read by triage. */
    navigations?: Array<{ url: string; status?: number; statusText?: string; error?: string }>;
    note?: string;
  };
  actual?: string;
  usedLocator?: unknown;
  /** The candidates a passed step tried before the one it used, with their counts (healing proposals). */
  triedLocators?: unknown[];
  /** Fields of observed text stored with U+FFFD in place of what PostgreSQL cannot hold (the protocol names them). */
  textReplaced?: string[];
}

/** What is recorded for one step: the executor's report, or the service's own verdict. */
export interface StepOutcome extends StepReport {
  /** 'executor' when it came in a step.result; 'service' for skips, time-outs, cancels, losses. */
  source: 'executor' | 'service';
}

/** step.exec payload (docs/protocol.md, "step.exec and step.result"). */
export interface StepExecPayload {
  stepIndex: number;
  timeoutMs: number;
  continueOnFail: boolean;
  evidence?: string;
  label?: string;
  step: StepAction;
  /** The attempt of the step's test case, from 2 on (a retry; absent on the first attempt). */
  attempt?: number;
  /** The first step of a retried test case: start it in a fresh browser context. */
  freshContext?: boolean;
}

/** A test case that failed and is run again: its steps' outcomes are archived and they start over. */
export interface CaseRetry {
  caseIndex: number;
  /** The attempt about to start (2 for the first retry). */
  attempt: number;
  /** Every step of the case. */
  stepIndexes: number[];
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
  /**
   * Set when this process takes over a run another process drove (a session resumed here): the
   * outcomes already recorded. run.start is sent again, and the run goes on from the first step
   * without an outcome.
   */
  recorded?: StepOutcome[];
  /** The session is detached as the run starts (claimed as its socket dropped): it starts paused. */
  detached?: boolean;
  /**
   * How long a write may wait for the database to come back (DB_UNAVAILABLE) before the run ends
   * with E_DATABASE_UNAVAILABLE. DEFAULT_OUTAGE_WINDOW_MS when absent.
   */
  outageWindowMs?: number;
  /**
   * Retries of each test case (by caseIndex; absent or 0: none): a case with a failed or errored
   * step runs again from its first step, up to this many more times.
   */
  retries?: number[];
  /** The attempt each test case is at (by caseIndex; absent: 1), for a run taken over mid-way. */
  attempts?: number[];
  /** caseIndex of the quarantined test cases: their failures are counted but do not fail the verdict. */
  quarantinedCases?: number[];
}

export const DEFAULT_OUTAGE_WINDOW_MS = 60_000;

export interface RunOutput {
  status: FinalRunStatus;
  counts: RunCounts;
  /** Test cases that failed and then passed on a retry (not failures of the run); only for a run with retries. */
  flaky?: number;
  /** Why the run ended as it did, for cancelled and error runs. */
  reason?: string;
}

export type RunEvent =
  | {
      type: 'STEP_RESULT';
      report: StepReport /** Id of the step.result frame, echoed when it is refused. */;
      ref?: string;
    }
  | { type: 'CANCEL'; reason?: string }
  | { type: 'EXECUTOR_LOST'; reason: string }
  /** The session's socket dropped and it waits to be resumed: nothing is sent, the step's time-out pauses. */
  | { type: 'EXECUTOR_DETACHED' }
  /** The session was resumed: the step in flight is sent again (same step, restarted time-out). */
  | { type: 'EXECUTOR_RESUMED' }
  // Answers to the `recordSteps` effect: the batch is durable, or it is not (nothing of it was written).
  | { type: 'STEPS_RECORDED' }
  | { type: 'STEPS_NOT_RECORDED'; message: string }
  // Answers to the `finishRun` effect: the last outcomes and the verdict are durable, or not.
  | { type: 'RUN_FINISH_WRITTEN' }
  | { type: 'RUN_FINISH_FAILED'; message: string }
  /**
   * The write asked for (recordSteps or finishRun) waits for the database to come back; the driver
   * keeps trying it and answers it as usual once it is durable. Nothing is sent meanwhile.
   */
  | { type: 'DB_UNAVAILABLE' };

/**
 * The effects the run machine requests, emitted (`actor.on('*', ...)`) in the order the machine
 * decides them. The run's driver carries them out; `recordSteps` and `finishRun` are durable writes
 * that must be answered with the events named beside them.
 */
export type RunEffect =
  /** Send run.start; always the first effect of a run. */
  | { type: 'sendRunStart'; runId: string }
  /**
   * Send step.exec with this payload. The same stepIndex twice in a row (after EXECUTOR_RESUMED) is the
   * same step sent again: the driver sends the same frame (same id).
   */
  | { type: 'sendStepExec'; payload: StepExecPayload }
  /** Write these outcomes, all or nothing. Answer: STEPS_RECORDED or STEPS_NOT_RECORDED. */
  | {
      type: 'recordSteps';
      runId: string;
      outcomes: StepOutcome[] /** Then, in the same transaction, archive that case's attempt and set its steps back to pending. */;
      retry?: CaseRetry;
    }
  /** Send run.cancel. */
  | { type: 'sendRunCancel'; runId: string; reason: string }
  /** Write the last outcomes and the verdict together. Answer: RUN_FINISH_WRITTEN or RUN_FINISH_FAILED. */
  | ({ type: 'finishRun'; runId: string; outcomes: StepOutcome[] } & RunOutput)
  /** Send run.finished; the run is durable by then. */
  | ({ type: 'sendRunFinished'; runId: string } & RunOutput)
  /** Refuse a step.result for a step not in flight (an E_UNEXPECTED error frame). */
  | { type: 'rejectStepResult'; stepIndex: number; reason: string; ref?: string };

export interface SessionInput {
  keepaliveMs: number;
  pongTimeoutMs: number;
  helloTimeoutMs: number;
  /** Invalid frames in a row that close the session. */
  maxInvalidFrames: number;
  /** How long a session whose socket dropped waits to be resumed (`detached`); 0 or absent: no resume. */
  resumeWindowMs?: number;
  /** How long a hello that resumes a session held by another process waits for it (`resuming`); helloTimeoutMs when absent. */
  resumeAnswerMs?: number;
}

export interface HelloPayload {
  executor: string;
  name?: string;
  version?: string;
  capabilities: Capabilities;
  projectId?: string;
  /** Resume this session instead of opening a new one (docs/protocol.md, "Resuming a session"). */
  resumeSessionId?: string;
}

export type SessionEvent =
  | { type: 'HELLO'; hello: HelloPayload; ref: string }
  | { type: 'PONG' }
  | { type: 'FRAME_VALID' }
  | { type: 'FRAME_INVALID'; message: string }
  | { type: 'CLOSE'; code: number; reason: string }
  | { type: 'SOCKET_CLOSED'; code: number; reason: string }
  /**
   * The executor reconnected: a new connection of the same project resumes the session
   * (hello.resumeSessionId), the old one dropped or not; ref: its hello.
   */
  | { type: 'RESUME'; ref: string }
  /** The service drains: close the socket (4503), telling the executor to reconnect elsewhere, and wait detached. */
  | { type: 'RECONNECT_ELSEWHERE'; code: number; reason: string }
  /** This connection's hello resumes a session another process may hold: it is being asked for. */
  | { type: 'RESUME_ASKED' }
  /** The session named by the hello cannot be resumed (the executor was told): a plain hello may follow. */
  | { type: 'RESUME_REFUSED' }
  /** This new connection became a session transferred from another process (its runs come with it); ref: its hello. */
  | { type: 'TRANSFERRED_IN'; ref: string }
  /** Another process asks for the session (its executor reconnected there): hold everything while its rows move. */
  | { type: 'TRANSFER_OUT' }
  /** The transfer did not happen: the session goes on here. */
  | { type: 'TRANSFER_CANCELLED' }
  /** The session and its runs now belong to the other process: it ends here (4409 on a socket still open). */
  | { type: 'TRANSFERRED_OUT' }
  // Answers to the `registerSession` effect: the session is stored, or it could not be.
  | { type: 'SESSION_REGISTERED' }
  /** `retryable`: the database is unavailable; the executor is told to say hello again later. */
  | { type: 'SESSION_NOT_REGISTERED'; message: string; retryable?: boolean };

/**
 * The effects the session machine requests, emitted (`actor.on('*', ...)`) in order. `registerSession`
 * is a durable write that must be answered with the events named beside it.
 */
export type SessionEffect =
  /** Store the session. Answer: SESSION_REGISTERED or SESSION_NOT_REGISTERED. */
  | { type: 'registerSession'; hello: HelloPayload }
  /** Send welcome, with the hello frame's id as ref; `resumed` when a new connection took the session over. */
  | { type: 'sendWelcome'; ref: string; resumed?: true }
  /** The socket is gone (or replaced): hold what is sent, pause the runs, take no new run. */
  | { type: 'detach'; code: number; reason: string }
  /** A new socket resumed the session: send what was held, resume the runs (their step in flight again). */
  | { type: 'reattach' }
  | { type: 'sendPing' }
  /** Close the socket from this side. */
  | { type: 'closeSocket'; code: number; reason: string };

export interface SessionOutput {
  code: number;
  reason: string;
  /** The session was transferred to another process: its row and runs are that process's now. */
  transferred?: true;
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
  /** Another connection resumed this session (hello.resumeSessionId); this socket is no longer it. */
  sessionTakenOver: 4409,
  /** The service is draining: reconnect (to another process) and resume the session there. */
  reconnect: 4503,
  version: 4426,
  /** The service failed on its side (e.g. the session could not be stored). */
  internalError: 1011,
  /** The service cannot serve the session now (its database is unavailable): connect again later. */
  tryAgainLater: 1013,
} as const;

/** Why a run cancelled at its project's request ended (its steps' error message and the run's reason), when CANCEL carries no reason of its own. */
export const CANCELLED_BY_REQUEST = 'cancelled by request';

/** Error codes of OTP plus the protocol-level ones this service adds (docs/protocol.md, "Error codes"). */
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
  /**
   * The service's database was unavailable: a hello it could not store (retry it), or a run whose
   * results could not be made durable within the outage window.
   */
  databaseUnavailable: 'E_DATABASE_UNAVAILABLE',
  /** Not JSON, not an object, or fails its message schema. */
  invalidFrame: 'E_INVALID_FRAME',
  /** A well-formed frame that makes no sense now (a result for a step not in flight, a second hello). */
  unexpected: 'E_UNEXPECTED',
  /** Skipped because an earlier step of the same test case failed under continueOnFail false. */
  skipped: 'E_SKIPPED',
} as const;
