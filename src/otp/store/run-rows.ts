// The shapes of a run as the store writes and reads it: a planned run, a claimed one, a step write,
// and the rows a claim or a transfer reads back. Their own file, so that the statements
// (run-sql.ts) and the planned-run memory (planned-runs.ts) need nothing of RunStore itself.
import type { PlannedStep, StepOutcome } from '../../../machines/types.js';
import type { RunQueueing } from '../queue/model.js';

/**
 * A test case of a run as the run keeps it: `version` is the case's revision when planned,
 * `quarantined` marks a case whose failure does not fail the run's verdict (docs/ai.md,
 * "Quarantine"), and `retries` is how many times it may run again after a failed attempt (absent: 0).
 */
export type RunCaseRef = {
  id: string;
  title: string;
  steps: number;
  version?: number;
  quarantined?: true;
  retries?: number;
};

export interface NewRun {
  id: string;
  tenantId: string;
  projectId: string;
  requestedSessionId: string | null;
  vars: Record<string, string>;
  allowedOrigins: string[];
  testCases: RunCaseRef[];
  planId: string | null;
  testRunId: string | null;
  finishTestRun: boolean;
  steps: Array<PlannedStep & { testCaseId: string }>;
  /** Its place in the queue (docs/queues.md); none: the legacy group (owner '', group ''), class normal. */
  queue?: RunQueueing;
}

export interface ClaimedRun {
  id: string;
  projectId: string;
  vars: Record<string, string>;
  allowedOrigins: string[];
  testCases: RunCaseRef[];
  steps: PlannedStep[];
}

/** One recorded step waiting for the group commit. */
export interface StepWrite {
  runId: string;
  outcome: StepOutcome;
}

/** A planned step as the claim and the transfer read it (json_build_object of otp_run_steps columns). */
export interface PlannedStepRow {
  step_index: number;
  case_index: number;
  action: PlannedStep['action'];
  timeout_ms: number;
  continue_on_fail: boolean;
  evidence_policy: string | null;
  label: string | null;
}

/** A run as the claim and the transfer read it, with its planned steps. */
export interface ClaimedRunRow {
  id: string;
  project_id: string;
  vars: Record<string, string>;
  allowed_origins: string[];
  test_cases: RunCaseRef[];
  steps: PlannedStepRow[] | null;
}

export function claimedRunOf(r: ClaimedRunRow): ClaimedRun {
  return {
    id: r.id,
    projectId: r.project_id,
    vars: r.vars,
    allowedOrigins: r.allowed_origins,
    testCases: r.test_cases,
    steps: (r.steps ?? []).map((s) => ({
      stepIndex: s.step_index,
      caseIndex: s.case_index,
      action: s.action,
      timeoutMs: s.timeout_ms,
      continueOnFail: s.continue_on_fail,
      ...(s.evidence_policy ? { evidence: s.evidence_policy } : {}),
      ...(s.label ? { label: s.label } : {}),
    })),
  };
}
