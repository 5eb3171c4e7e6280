// A run's test cases, each with the outcome a report gives it. JUnit and CTRF (junit.ts, ctrf.ts)
// both start from a `Report` (a header and its cases), so the two never disagree. An OTP run becomes
// one here (`runReport`, from the run as GET /otp/runs/:id answers it); a test run in
// test-run-report.ts (from its latest result per case). A case's outcome is the one rule of
// machines/case-outcome.ts; a step is named as machines/step-names.ts names it.
import { type CaseOutcome, judgeCase, type OutcomeStep, tallyOf } from '../../machines/case-outcome.js';
import { type StepPlace, stepName, stepPlace } from '../../machines/step-names.js';

/** What the reports read of an OTP run: the fields of the REST run view they need. */
export interface ReportedRun {
  id: string;
  status: string;
  planId?: string | null;
  reason?: string | null;
  testCases: Array<{ id: string; title: string; steps: number; quarantined?: boolean; retries?: number }>;
  startedAt: string | null;
  finishedAt: string | null;
  createdAt: string | null;
  durationMs: number | null;
  steps: Array<{
    stepIndex: number;
    caseIndex: number;
    label: string | null;
    action: unknown;
    status: string;
    durationMs: number | null;
    error: unknown;
    actual: string | null;
    evidence: unknown;
    /**
     * Which attempt of its case this step belongs to (1 first), once runs retry failed cases; absent:
     * the case ran once. The case's outcome is its last attempt's; earlier failed attempts are kept.
     */
    attempt?: number;
  }>;
  /** Outcomes of the attempts before the last (GET /otp/runs/:id earlierAttempts), by step and attempt. */
  earlierAttempts?: Array<{
    stepIndex: number;
    caseIndex: number;
    attempt: number;
    status: string;
    durationMs: number | null;
    error: unknown;
    actual: string | null;
    evidence: unknown;
  }>;
}

/** Every attempt's steps: the run's (last attempts) and its earlier attempts, labelled as their step. */
function allAttempts(run: ReportedRun): ReportedRun['steps'] {
  if (!run.earlierAttempts?.length) return run.steps;
  const byIndex = new Map(run.steps.map((s) => [s.stepIndex, s]));
  const earlier = run.earlierAttempts.map((a) => ({
    ...a,
    label: byIndex.get(a.stepIndex)?.label ?? null,
    action: byIndex.get(a.stepIndex)?.action ?? null,
  }));
  return [...earlier, ...run.steps];
}

export type { CaseOutcome };

export interface CaseFailure {
  code: string;
  message: string;
  stepIndex?: number;
  /** The step as people read it (machines/step-names.ts): "step 3 (stepIndex 7)". */
  step?: string;
  /** Which attempt it ended (1 first), for the failed attempts before the last. */
  attempt?: number;
}

export interface CaseResult {
  id: string;
  title: string;
  outcome: CaseOutcome;
  /** Quarantined when the run started: its failure is reported as it is and did not fail the run's verdict. */
  quarantined?: boolean;
  durationMs: number;
  /** The first step that did not pass (fail or error) of the last attempt, when there is one. */
  failure?: CaseFailure;
  /** Earlier attempts that failed before the last one (retries), oldest first. */
  failedAttempts: CaseFailure[];
  /** How many times the case ran (1 without retries). */
  attempts: number;
  /** One line per step: its index, what it does, how it ended. */
  lines: string[];
  /** Why a skipped case did not run, when the report knows better than its reason. */
  skipReason?: string;
  /** Paths of the screenshots its steps left (relative to the service, as the run view gives them). */
  screenshots: string[];
}

/** What JUnit and CTRF write: the report's header and its cases. */
export interface Report {
  /** The run's id (an OTP run's otr_..., a test run's tr_...). */
  id: string;
  /** The testsuite's name. */
  name: string;
  status: string;
  reason?: string | null;
  /** classname of every testcase (the plan, or "otp"). */
  classname: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number;
  /** Where a reader sees the run (relative to the service). */
  path: string;
  cases: CaseResult[];
}

type Step = ReportedRun['steps'][number];

/** The one rule (machines/case-outcome.ts) over one attempt's steps, and the step that decided it. */
function judged(steps: Step[], attempt: number) {
  const outcomeSteps = steps.map((s) => ({
    ...s,
    status: s.status as OutcomeStep['status'],
    code: (s.error as { code?: string } | null)?.code ?? null,
  }));
  return judgeCase(tallyOf(outcomeSteps, attempt));
}

function failureOf(step: Step | null, places: ReadonlyMap<number, StepPlace>): CaseFailure | undefined {
  if (!step) return undefined;
  const error = (step.error ?? null) as { code?: string; message?: string } | null;
  const place = places.get(step.stepIndex);
  const name = place ? stepName(place) : `stepIndex ${step.stepIndex}`;
  return {
    code: error?.code ?? 'E_INTERNAL',
    message: error?.message ?? `${name} ${step.status}`,
    stepIndex: step.stepIndex,
    step: name,
  };
}

/**
 * Each test case of the run with its outcome (judgeCase: its last attempt decides; a pass on a retry
 * is flaky), the step that decided it, the attempts that failed before, and a line per step.
 */
export function caseResults(run: ReportedRun): CaseResult[] {
  const everyAttempt = allAttempts(run);
  const places = new Map(run.steps.map((s) => [s.stepIndex, stepPlace(run.steps, s.stepIndex)]));
  return run.testCases.map((testCase, caseIndex) => {
    const all = everyAttempt.filter((s) => s.caseIndex === caseIndex);
    const attemptNumbers = [...new Set(all.map((s) => s.attempt ?? 1))].sort((a, b) => a - b);
    const last = attemptNumbers[attemptNumbers.length - 1] ?? 1;
    const failedAttempts = attemptNumbers.slice(0, -1).flatMap((n) => {
      const failed = failureOf(
        judged(
          all.filter((s) => (s.attempt ?? 1) === n),
          n,
        ).failingStep,
        places,
      );
      return failed ? [{ ...failed, attempt: n }] : [];
    });
    const { outcome, failingStep } = judged(
      all.filter((s) => (s.attempt ?? 1) === last),
      last,
    );
    const failure = failureOf(failingStep, places);
    return {
      id: testCase.id,
      title: testCase.title,
      outcome,
      ...(testCase.quarantined === true ? { quarantined: true } : {}),
      durationMs: all.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
      ...(failure ? { failure } : {}),
      failedAttempts,
      attempts: Math.max(1, attemptNumbers.length),
      lines: all.map((s) => stepLine(s, places)),
      screenshots: all.flatMap((s) => {
        const url = (s.evidence as { screenshotUrl?: string } | null)?.screenshotUrl;
        return url ? [url] : [];
      }),
    };
  });
}

/** An OTP run as a report. */
export function runReport(run: ReportedRun): Report {
  return {
    id: run.id,
    name: `otp run ${run.id}`,
    status: run.status,
    reason: run.reason ?? null,
    classname: run.planId ?? 'otp',
    startedAt: run.startedAt ?? run.createdAt,
    finishedAt: run.finishedAt,
    durationMs: run.durationMs ?? 0,
    path: `/console/runs/${run.id}`,
    cases: caseResults(run),
  };
}

function stepLine(step: Step, places: ReadonlyMap<number, StepPlace>): string {
  const action = (step.action as { action?: string } | null)?.action ?? 'step';
  const what = step.label ? `${action} (${step.label})` : action;
  const error = step.error as { code?: string; message?: string } | null;
  const why = error?.code ? ` ${error.code}${error.message ? `: ${error.message}` : ''}` : '';
  const actual = step.actual !== null && step.actual !== undefined ? ` (actual: ${step.actual})` : '';
  const attempt = step.attempt && step.attempt > 1 ? ` (attempt ${step.attempt})` : '';
  const place = places.get(step.stepIndex);
  return `${place ? stepName(place) : `stepIndex ${step.stepIndex}`}${attempt}: ${what}: ${step.status}${why}${actual}`;
}
