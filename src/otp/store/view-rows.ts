// The rows the run and session views are made from, typed by their columns (db/migrations). A column
// whose value a view passes on as it is takes the view's own type for it, so the two cannot drift.
import type { RunSummary, SessionView, StepAttemptView, StepView } from './view-types.js';

/** An otp_runs row (every column). */
export interface RunRow {
  id: string;
  tenant_id: string;
  project_id: string;
  requested_session_id: string | null;
  session_id: string | null;
  instance_id: string | null;
  status: RunSummary['status'];
  vars: Record<string, string> | null;
  allowed_origins: RunSummary['allowedOrigins'];
  test_cases: RunSummary['testCases'];
  plan_id: string | null;
  test_run_id: string | null;
  finish_test_run: boolean;
  total_steps: number;
  passed: number;
  failed: number;
  skipped: number;
  reason: RunSummary['reason'];
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  cancel_requested_at: Date | null;
  /** The queue's columns (migration 070); absent where a statement names its columns without them. */
  queue_owner?: string;
  queue_group?: string;
  queue_rank?: number;
  superseded_by?: string | null;
}

/** The columns a step and an earlier attempt of it share (otp_run_steps, otp_run_step_attempts). */
interface StepOutcomeColumns {
  step_index: number;
  status: StepView['status'];
  source: StepView['source'];
  duration_ms: StepView['durationMs'];
  error: StepView['error'];
  evidence: StepView['evidence'];
  actual: StepView['actual'];
  used_locator: StepView['usedLocator'];
  finished_at: Date | null;
}

/** An otp_run_steps row. */
export interface StepRow extends StepOutcomeColumns {
  case_index: number;
  test_case_id: string;
  label: StepView['label'];
  action: StepView['action'];
  text_replaced?: StepView['textReplaced'];
  tried_locators?: StepView['triedLocators'] | null;
  attempt?: number | null;
}

/** An otp_run_step_attempts row. */
export interface StepAttemptRow extends Omit<StepOutcomeColumns, 'status'> {
  status: StepAttemptView['status'];
  attempt: StepAttemptView['attempt'];
}

/** An otp_sessions row, with the count of its running runs where the query adds it. */
export interface SessionRow {
  id: string;
  project_id: string;
  executor: SessionView['executor'];
  name: SessionView['name'];
  version: SessionView['version'];
  capabilities: SessionView['capabilities'];
  max_parallel: number;
  status: SessionView['status'];
  active_runs?: number | null;
  connected_at: Date;
  closed_at: Date | null;
  close_code: SessionView['closeCode'];
  close_reason: SessionView['closeReason'];
}
