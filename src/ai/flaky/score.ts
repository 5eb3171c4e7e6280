// Flakiness from history (docs/ai.md, "Flakiness"): pure rules over each test case's outcomes in the
// window, oldest first. A case is
// - `broken` when it fails nearly always (at least BROKEN_RATE of at least MIN_RUNS runs): not flaky;
// - `flaky` at once when a run passed it only on retry, or when the rate at which its outcome flips
//   between consecutive runs of the same version reaches FLAG_AT over its last RATE_RUNS runs (with at
//   least MIN_RUNS of them); once flagged it stays flagged until that rate falls below CLEAR_AT, so a
//   case near one threshold does not flap. The walk over the history decides it: the same history
//   gives the same answer.
// - `stable` otherwise (`insufficient` when it has fewer than MIN_RUNS runs and nothing flagged it).
import { type CaseOutcome, isFailingOutcome, isPassingOutcome, judgeCase } from '../../../machines/case-outcome.js';
import { isFailure } from '../../../machines/counts.js';
import type { CaseAttempt } from '../run-history.js';

export const FLAKY_RULES = { minRuns: 8, rateRuns: 20, flagAt: 0.3, clearAt: 0.1, brokenRate: 0.9 } as const;

export type CaseRunOutcome = 'pass' | 'fail' | 'flaky' | 'skip';
export type FlakyStatus = 'flaky' | 'broken' | 'stable' | 'insufficient';

export interface CaseRun {
  runId: string;
  createdAt: string;
  version: number | null;
  outcome: CaseRunOutcome;
  /** Positions (0-based, in the test case) of the steps that failed in the run's last attempt. */
  failedPositions: number[];
}

export interface CaseFlakiness {
  testCaseId: string;
  status: FlakyStatus;
  /** 0..1: the flip rate over the last runs, or the share of runs passed on retry, whichever is higher. */
  score: number;
  runs: number;
  failures: number;
  retryPasses: number;
  flips: number;
  flipRate: number;
  reasons: string[];
  /** Runs that show it: the runs passed on retry and the runs whose outcome flipped (newest first, at most 10). */
  evidenceRuns: Array<{ runId: string; createdAt: string; outcome: CaseRunOutcome; version: number | null }>;
  /** The steps that failed in the window, by how often. */
  steps: Array<{ position: number; failures: number }>;
  lastRuns: CaseRun[];
}

/**
 * What the history says of a case's outcome (machines/case-outcome.ts): pass, flaky (passed on a
 * retry), fail (failed or error), skip (skipped, cancelled: it said nothing).
 */
export function historyOutcome(outcome: CaseOutcome): CaseRunOutcome {
  if (outcome === 'flaky') return 'flaky';
  if (isPassingOutcome(outcome)) return 'pass';
  return isFailingOutcome(outcome) ? 'fail' : 'skip';
}

/** Each (run, test case) as one outcome: its last attempt decides (judgeCase); a pass on a retry is flaky. */
export function caseRuns(attempts: readonly CaseAttempt[]): Map<string, CaseRun[]> {
  const last = new Map<string, CaseAttempt>();
  for (const a of attempts) {
    const key = `${a.runId}/${a.caseIndex}`;
    const seen = last.get(key);
    if (!seen || a.attempt > seen.attempt) last.set(key, a);
  }
  const byCase = new Map<string, CaseRun[]>();
  for (const a of last.values()) {
    const run: CaseRun = {
      runId: a.runId,
      createdAt: a.createdAt,
      version: a.version,
      outcome: historyOutcome(judgeCase(a).outcome),
      failedPositions: a.unpassed.filter((s) => isFailure(s.status)).map((s) => s.stepIndex - a.firstIndex),
    };
    const list = byCase.get(a.testCaseId);
    if (list) list.push(run);
    else byCase.set(a.testCaseId, [run]);
  }
  // Oldest first (run ids sort by creation).
  for (const runs of byCase.values()) runs.sort((x, y) => (x.runId < y.runId ? -1 : x.runId > y.runId ? 1 : 0));
  return byCase;
}

const passed = (o: CaseRunOutcome) => o === 'pass' || o === 'flaky';
const pct = (x: number) => `${Math.round(x * 100)}%`;

/** Flips over consecutive runs of the same version among `runs` (skips are left out). */
function flipsOf(runs: readonly CaseRun[]): { flips: number; pairs: number; flipped: CaseRun[] } {
  let flips = 0;
  let pairs = 0;
  const flipped: CaseRun[] = [];
  for (let i = 1; i < runs.length; i += 1) {
    const before = runs[i - 1]!;
    const after = runs[i]!;
    if (before.version !== after.version) continue;
    pairs += 1;
    if (passed(before.outcome) !== passed(after.outcome)) {
      flips += 1;
      flipped.push(after);
    }
  }
  return { flips, pairs, flipped };
}

export function flakinessOf(testCaseId: string, all: readonly CaseRun[], rules = FLAKY_RULES): CaseFlakiness {
  const runs = all.filter((r) => r.outcome !== 'skip');
  const failures = runs.filter((r) => r.outcome === 'fail').length;
  const retried = runs.filter((r) => r.outcome === 'flaky');
  const { flips, pairs } = flipsOf(runs);
  // The walk: at each run, the flip rate of the last rateRuns runs, against the threshold that applies.
  let flagged = false;
  let rate = 0;
  for (let i = 0; i < runs.length; i += 1) {
    const trailing = runs.slice(Math.max(0, i + 1 - rules.rateRuns), i + 1);
    if (trailing.length < rules.minRuns) continue;
    const t = flipsOf(trailing);
    rate = t.pairs ? t.flips / t.pairs : 0;
    flagged = flagged ? rate >= rules.clearAt : rate >= rules.flagAt;
  }
  const lastRuns = runs.slice(-rules.rateRuns);
  const recent = flipsOf(lastRuns);
  const failRate = runs.length ? failures / runs.length : 0;
  const reasons: string[] = [];
  let status: FlakyStatus;
  if (runs.length >= rules.minRuns && failRate >= rules.brokenRate) {
    status = 'broken';
    reasons.push(
      `failed ${failures} of ${runs.length} runs (${pct(failRate)}, at least ${pct(rules.brokenRate)}): broken, not flaky; it is never quarantined automatically`,
    );
  } else if (retried.length) {
    status = 'flaky';
    reasons.push(`passed only on retry in ${retried.length} of ${runs.length} runs: flagged at once`);
  } else if (flagged) {
    status = 'flaky';
    reasons.push(
      `its outcome flipped ${recent.flips} times in ${recent.pairs} consecutive runs of the same version (${pct(rate)}); a case is flagged at ${pct(rules.flagAt)} and cleared below ${pct(rules.clearAt)}`,
    );
  } else if (runs.length < rules.minRuns) {
    status = 'insufficient';
    reasons.push(`${runs.length} runs in the window; a rate flags a case only from ${rules.minRuns} runs`);
  } else {
    status = 'stable';
    reasons.push(
      `its outcome flipped ${recent.flips} times in ${recent.pairs} consecutive runs (${pct(rate)}), under the ${pct(rules.flagAt)} that flags a case`,
    );
  }
  const stepFailures = new Map<number, number>();
  for (const run of runs) for (const p of run.failedPositions) stepFailures.set(p, (stepFailures.get(p) ?? 0) + 1);
  const evidence = [...retried, ...flipsOf(runs).flipped].sort((x, y) => (x.runId < y.runId ? 1 : -1)).slice(0, 10);
  return {
    testCaseId,
    status,
    score: Math.round(Math.max(rate, runs.length ? retried.length / runs.length : 0) * 1000) / 1000,
    runs: runs.length,
    failures,
    retryPasses: retried.length,
    flips,
    flipRate: pairs ? Math.round((flips / pairs) * 1000) / 1000 : 0,
    reasons,
    evidenceRuns: evidence.map((r) => ({
      runId: r.runId,
      createdAt: r.createdAt,
      outcome: r.outcome,
      version: r.version,
    })),
    steps: [...stepFailures]
      .map(([position, n]) => ({ position, failures: n }))
      .sort((a, b) => b.failures - a.failures || a.position - b.position),
    lastRuns: runs.slice(-20).reverse(),
  };
}

const RANK: Record<FlakyStatus, number> = { flaky: 0, broken: 1, stable: 2, insufficient: 3 };

/** Every case of the window, flaky first (highest score first), then broken, stable, too few runs. */
export function rankFlakiness(attempts: readonly CaseAttempt[], rules = FLAKY_RULES): CaseFlakiness[] {
  return [...caseRuns(attempts)]
    .map(([id, runs]) => flakinessOf(id, runs, rules))
    .sort((a, b) => RANK[a.status] - RANK[b.status] || b.score - a.score || (a.testCaseId < b.testCaseId ? -1 : 1));
}
