// Pure counting of step outcomes and the verdict of a run whose steps all have an outcome.
import type { RunCounts, StepStatus } from './types.js';

/** fail and error count as failures (a time-out is recorded as error); pass, skip and pending do not. */
export function isFailure(status: StepStatus | 'pending'): boolean {
  return status === 'fail' || status === 'error';
}

export function emptyCounts(total: number): RunCounts {
  return { passed: 0, failed: 0, skipped: 0, total };
}

/** `counts` plus the given outcomes (total unchanged). */
export function addOutcomes(counts: RunCounts, outcomes: ReadonlyArray<{ status: StepStatus }>): RunCounts {
  let { passed, failed, skipped } = counts;
  for (const { status } of outcomes) {
    if (status === 'pass') passed += 1;
    else if (status === 'skip') skipped += 1;
    else failed += 1;
  }
  return { passed, failed, skipped, total: counts.total };
}

/** `counts` less the given outcomes (a retried attempt's, taken back). */
export function subtractOutcomes(counts: RunCounts, outcomes: ReadonlyArray<{ status: StepStatus }>): RunCounts {
  const taken = addOutcomes(emptyCounts(counts.total), outcomes);
  return {
    passed: counts.passed - taken.passed,
    failed: counts.failed - taken.failed,
    skipped: counts.skipped - taken.skipped,
    total: counts.total,
  };
}

/** passed = pass, failed = fail + error, skipped = skip, total = the run's number of steps. */
export function countOutcomes(outcomes: ReadonlyArray<{ status: StepStatus }>, total: number): RunCounts {
  return addOutcomes(emptyCounts(total), outcomes);
}

/**
 * Verdict of a run that ran to its end: 'passed' when no step failed or errored (skips, including
 * capability skips, are allowed), else 'failed'. Cancelled and error runs are decided elsewhere.
 */
export function verdict(counts: RunCounts, quarantinedFailures = 0): 'passed' | 'failed' {
  // Failures of quarantined test cases are counted in `failed` and left out of the verdict.
  return counts.failed - quarantinedFailures > 0 ? 'failed' : 'passed';
}
