// POST /ai/runs/{id}/triage: for each failed test case of a finished run, its first failed step's
// facts (as the run records them), the case's history, the signature's earlier failures and bugs,
// and what people said (corrections, rules), through the rules of classify.ts.

import { isFailingOutcome, judgeCase, outcomeStep, tallyOf } from '../../machines/case-outcome.js';
import { isFinalRunStatus } from '../../machines/types.js';
import type { Principal } from '../auth/principal.js';
import { errors } from '../errors.js';
import { type BugLinkSource, type CaseRun, earlierCaseRuns, type KnownBug, knownBugsOf } from './bug-links.js';
import type { BugLookup } from './bugs.js';
import { classify, type TriedCount, type Verdict } from './classify.js';
import type { Navigation } from './environment.js';
import type { RunReader, RunView } from './facts.js';
import type { EarlierFailure, FailureHistory } from './history.js';
import type { Judgements } from './judgements.js';
import { isSignedFailure, locatorIdentity, signatureOf, signatureParts } from './signature.js';

type StepView = RunView['steps'][number];

export interface CaseTriage extends Verdict {
  caseIndex: number;
  testCaseId: string;
  title: string | null;
  stepIndex: number;
  signature: string;
  similar: EarlierFailure[];
  bugs: KnownBug[];
}

export interface RunTriage {
  runId: string;
  status: string;
  cases: CaseTriage[];
}

interface StepError {
  code?: string;
  message?: string;
  triedLocators?: Array<Record<string, unknown> & { count?: number }>;
}

/**
 * The step that failed each case whose outcome is failed or error (machines/case-outcome.ts), in case
 * order, when it is a failure worth a signature (the same the scan signs).
 */
export function failedSteps(run: RunView): StepView[] {
  const byCase = new Map<number, StepView[]>();
  for (const step of run.steps) {
    const steps = byCase.get(step.caseIndex);
    if (steps) steps.push(step);
    else byCase.set(step.caseIndex, [step]);
  }
  return [...byCase.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, steps]) => {
      const attempt = Math.max(1, ...steps.map((s) => s.attempt));
      const { outcome, failingStep } = judgeCase(tallyOf(steps.map(outcomeStep), attempt));
      return isFailingOutcome(outcome) && failingStep && isSignedFailure(failingStep) ? [failingStep] : [];
    });
}

export function signatureOfStep(step: StepView): string {
  const error = (step.error ?? {}) as StepError;
  return signatureOf(signatureParts({ code: error.code, action: step.action, message: error.message }));
}

export interface TriageDeps {
  reader: RunReader;
  history: FailureHistory;
  bugs: BugLookup;
  bugLinks: BugLinkSource;
  judgements: Judgements;
}

/** What the case's steps up to the failed one say besides it: their navigations, how often the run tried it. */
function caseContext(run: RunView, failed: StepView): { navigations: Navigation[]; attempts: number } {
  const steps = run.steps.filter((s) => s.caseIndex === failed.caseIndex);
  const navigations = steps
    .filter((s) => s.stepIndex <= failed.stepIndex)
    .flatMap((s) => (s.evidence as { navigations?: Navigation[] } | null)?.navigations ?? []);
  return { navigations, attempts: Math.max(1, ...steps.map((s) => s.attempt)) };
}

/** Each failure's bugs: by signature (the bug-draft route) and by the links people made to results and cases. */
async function bugsOfFailures(
  deps: Pick<TriageDeps, 'bugs' | 'bugLinks' | 'history'>,
  principal: Principal,
  runId: string,
  steps: readonly StepView[],
  signatures: readonly string[],
): Promise<KnownBug[][]> {
  const [bySignature, earlier] = await Promise.all([
    deps.bugs.bugsOf(principal, signatures),
    earlierCaseRuns(deps.history.db, principal.projectId, signatures, runId),
  ]);
  const results: CaseRun[] = [
    ...steps.map((s) => ({ runId, testCaseId: s.testCaseId })),
    ...[...earlier.values()].flat(),
  ];
  const links = await deps.bugLinks.linkedBugs(
    principal.projectId,
    steps.map((s) => s.testCaseId),
    results,
  );
  return steps.map((step, i) => {
    const signature = signatures[i]!;
    const failure = { signature, testCaseId: step.testCaseId, runId };
    return knownBugsOf(failure, bySignature.get(signature) ?? [], earlier.get(signature) ?? [], links);
  });
}

export async function triageRun(deps: TriageDeps, principal: Principal, runId: string): Promise<RunTriage> {
  const { reader, history, judgements } = deps;
  const run = await reader.run(principal, runId);
  if (!isFinalRunStatus(run.status))
    throw errors.conflict(`Run ${runId} is ${run.status}: triage needs its verdict`, { runId, status: run.status });
  const steps = failedSteps(run);
  if (steps.length === 0) return { runId, status: run.status, cases: [] };
  const signatures = steps.map(signatureOfStep);
  const finishedAt = new Date(run.finishedAt ?? Date.now());
  const [corrections, rules, bugsOf, histories, earlier] = await Promise.all([
    judgements.correctionsOf(principal.projectId, signatures),
    judgements.allRules(principal.projectId),
    bugsOfFailures(deps, principal, runId, steps, signatures),
    history.caseHistories(
      principal.projectId,
      steps.map((s) => s.testCaseId),
      finishedAt,
      runId,
    ),
    history.earlier(principal.projectId, signatures, finishedAt, runId),
  ]);
  const cases = steps.map((step, i): CaseTriage => {
    const signature = signatures[i]!;
    const error = (step.error ?? {}) as StepError;
    const action = step.action as { action?: string; kind?: string } | null;
    const tried: TriedCount[] = (error.triedLocators ?? []).map((t) => ({
      describe: locatorIdentity(t),
      count: typeof t.count === 'number' ? t.count : undefined,
    }));
    const evidence = step.evidence as { consoleErrors?: string[] } | null;
    const similar = earlier.get(signature) ?? [];
    const verdict = classify({
      signature,
      code: error.code ?? 'E_UNKNOWN',
      message: error.message ?? '',
      action:
        action?.action === 'assert' && action.kind ? `assert:${action.kind}` : String(action?.action ?? 'unknown'),
      source: step.source,
      tried,
      elementFound: step.usedLocator != null || (step.actual != null && step.actual !== ''),
      actual: step.actual,
      consoleErrors: evidence?.consoleErrors?.length ?? 0,
      runStatus: run.status,
      runReason: run.reason,
      history: histories.get(step.testCaseId) ?? [],
      earlierOfSignature: similar.length,
      bugs: bugsOf[i]!,
      ...caseContext(run, step),
      correction: corrections.get(signature),
      rules,
    });
    const title = (run.testCases as Array<{ title?: string }>)[step.caseIndex]?.title ?? null;
    return {
      caseIndex: step.caseIndex,
      testCaseId: step.testCaseId,
      title,
      stepIndex: step.stepIndex,
      signature,
      ...verdict,
      similar,
      bugs: bugsOf[i]!,
    };
  });
  return { runId, status: run.status, cases };
}
