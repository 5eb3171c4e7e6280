// A test run (tests/runs) as a report: one case per test case of the run, from its latest result in
// the run (as the run's summary counts it). Results entered by hand, recorded by OTP runs or imported
// from other tools read alike; a case without a result yet is skipped ("no result yet").
import { CASE_OUTCOMES } from '../../machines/case-outcome.js';
import type { CaseFailure, CaseOutcome, CaseResult, Report } from './case-results.js';

export interface ReportedTestRun {
  id: string;
  title: string;
  status: string;
  planId?: string | null;
  createdAt: string;
  closedAt?: string | null;
  /** The cases the run is meant to cover, in order (cases with results but not listed follow). */
  testCaseIds: string[];
}

/** The latest result of one case in the run, as GET /tests/results answers it. */
export interface ReportedResult {
  testCaseId: string;
  status: string;
  durationMs?: number;
  comment?: string;
  executedAt?: string;
  evidenceAssetIds?: string[];
  labels?: string[];
  /** The step that decided a failed, error or cancelled result (recorded by OTP runs). */
  failure?: RecordedFailure;
  /** Failed attempts before this result's outcome (recorded by OTP runs with retries). */
  failedAttempts?: RecordedFailure[];
}

/** A failing step as a test result keeps it. */
export interface RecordedFailure {
  message: string;
  code?: string;
  attempt?: number;
  stepIndex?: number;
  step?: string;
}

function caseFailure(f: RecordedFailure, fallbackCode: string, attempt?: number): CaseFailure {
  return {
    code: f.code ?? fallbackCode,
    message: f.message,
    ...(attempt !== undefined ? { attempt } : {}),
    ...(f.stepIndex !== undefined ? { stepIndex: f.stepIndex } : {}),
    ...(f.step ? { step: f.step } : {}),
  };
}

/**
 * A result's status is a case outcome (machines/case-outcome.ts), but for `blocked`, which only a
 * person enters: the case did not run, as a skip.
 */
function outcomeOfResult(status: string): CaseOutcome {
  if (status === 'blocked') return 'skipped';
  return (CASE_OUTCOMES as readonly string[]).includes(status) ? (status as CaseOutcome) : 'error';
}

export function testRunReport(
  run: ReportedTestRun,
  titles: ReadonlyMap<string, string>,
  latest: ReadonlyMap<string, ReportedResult>,
): Report {
  const ids = [...new Set([...run.testCaseIds, ...latest.keys()])];
  const cases = ids.map((id) => {
    const result = latest.get(id);
    const title = titles.get(id) ?? id;
    return result ? caseOfResult(id, title, result) : noResultYet(id, title);
  });
  const started = run.createdAt;
  const finished = run.closedAt ?? null;
  return {
    id: run.id,
    name: run.title,
    status: run.status,
    classname: run.planId ?? 'tests',
    startedAt: started,
    finishedAt: finished,
    durationMs: cases.reduce((sum, c) => sum + c.durationMs, 0),
    path: `/api/v1/tests/runs/${run.id}`,
    cases,
  };
}

/** A case of the test run that has no result. */
function noResultYet(id: string, title: string): CaseResult {
  return {
    id,
    title,
    outcome: 'skipped',
    durationMs: 0,
    failedAttempts: [],
    attempts: 0,
    lines: ['no result yet'],
    screenshots: [],
    skipReason: 'no result yet',
  };
}

/** A case of the test run by its latest result. */
function caseOfResult(id: string, title: string, result: ReportedResult): CaseResult {
  const base = outcomeOfResult(result.status);
  // A pass marked flaky (an imported report said so) is flaky.
  const outcome: CaseOutcome = base === 'passed' && result.labels?.includes('flaky') ? 'flaky' : base;
  const message = result.comment ?? `${result.status}`;
  const failedAttempts = (result.failedAttempts ?? []).map((f, i) => caseFailure(f, 'failed', f.attempt ?? i + 1));
  const failure = result.failure ? caseFailure(result.failure, result.status) : { code: result.status, message };
  return {
    id,
    title,
    outcome: outcome === 'passed' && failedAttempts.length ? 'flaky' : outcome,
    durationMs: result.durationMs ?? 0,
    ...(outcome === 'failed' || outcome === 'error' ? { failure } : {}),
    failedAttempts,
    attempts: 1 + failedAttempts.length,
    lines: [
      `${result.status}${result.executedAt ? ` at ${result.executedAt}` : ''}${result.comment ? `: ${result.comment}` : ''}`,
    ],
    screenshots: (result.evidenceAssetIds ?? []).map((asset) => `/api/v1/assets/items/${asset}/download`),
    ...(base === 'skipped' || base === 'cancelled' ? { skipReason: result.comment ?? result.status } : {}),
  };
}
