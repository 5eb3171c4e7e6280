// A run's test cases, each with the outcome a report gives it, from the run as GET /otp/runs/:id
// answers it. JUnit and CTRF (junit.ts, ctrf.ts) both start here, so the two never disagree.

/** What the reports read of a run: the fields of the REST run view they need. */
export interface ReportedRun {
  id: string;
  status: string;
  planId?: string | null;
  reason?: string | null;
  testCases: Array<{ id: string; title: string; steps: number; quarantined?: boolean }>;
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
  }>;
}

export type CaseOutcome = 'passed' | 'failed' | 'errored' | 'skipped' | 'pending';

export interface CaseResult {
  id: string;
  title: string;
  outcome: CaseOutcome;
  /** Quarantined when the run started: its failure is reported as it is and did not fail the run's verdict. */
  quarantined: boolean;
  durationMs: number;
  /** The first step that did not pass (fail or error), when there is one. */
  failure?: { code: string; message: string; stepIndex: number };
  /** One line per step: its index, what it does, how it ended. */
  lines: string[];
  /** Paths of the screenshots its steps left (relative to the service, as the run view gives them). */
  screenshots: string[];
}

/**
 * A case failed when a step's check did not hold (fail), errored when a step could not be performed
 * (error: a time-out, a lost executor), was skipped when none of its steps ran (a cancel, capability
 * skips), and is pending while a step has no outcome yet.
 */
export function caseResults(run: ReportedRun): CaseResult[] {
  return run.testCases.map((testCase, caseIndex) => {
    const steps = run.steps.filter((s) => s.caseIndex === caseIndex);
    const firstBad = steps.find((s) => s.status === 'fail' || s.status === 'error');
    const outcome: CaseOutcome = steps.some((s) => s.status === 'pending')
      ? 'pending'
      : firstBad
        ? firstBad.status === 'fail' ? 'failed' : 'errored'
        : steps.length && steps.every((s) => s.status === 'skip') ? 'skipped' : 'passed';
    const error = (firstBad?.error ?? null) as { code?: string; message?: string } | null;
    return {
      id: testCase.id,
      title: testCase.title,
      outcome,
      quarantined: testCase.quarantined === true,
      durationMs: steps.reduce((sum, s) => sum + (s.durationMs ?? 0), 0),
      ...(firstBad ? { failure: { code: error?.code ?? 'E_INTERNAL', message: error?.message ?? `step ${firstBad.stepIndex} ${firstBad.status}`, stepIndex: firstBad.stepIndex } } : {}),
      lines: steps.map(stepLine),
      screenshots: steps.flatMap((s) => {
        const url = (s.evidence as { screenshotUrl?: string } | null)?.screenshotUrl;
        return url ? [url] : [];
      }),
    };
  });
}

function stepLine(step: ReportedRun['steps'][number]): string {
  const action = (step.action as { action?: string } | null)?.action ?? 'step';
  const what = step.label ? `${action} (${step.label})` : action;
  const error = step.error as { code?: string; message?: string } | null;
  const why = error?.code ? ` ${error.code}${error.message ? `: ${error.message}` : ''}` : '';
  const actual = step.actual !== null && step.actual !== undefined ? ` (actual: ${step.actual})` : '';
  return `step ${step.stepIndex}: ${what}: ${step.status}${why}${actual}`;
}
