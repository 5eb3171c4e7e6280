// POST /ai/bugs/draft: a bug written from a failed step of a run: the case's steps up to the failed
// one as the console words them, what was expected and what happened, where (executor, browser, the
// names of the run's variables, never their values) and the evidence. With save, the bug is created,
// linked found_by to the test result of that case in that run (else to the test case), and remembered
// for the step's signature, so later failures of the same cause show it.
import { stepName, stepPlace } from '../../machines/step-names.js';
import { hasScope, type Principal } from '../auth/principal.js';
import { errors } from '../errors.js';
import { stepSentence } from '../otp/protocol/sentences.js';
import type { ResourceStore } from '../rest/resource/store.js';
import type { BugLookup } from './bugs.js';
import type { RunReader, RunView, SessionFacts } from './facts.js';
import { signatureOfStep } from './triage.js';

type StepView = RunView['steps'][number];

export interface BugDraft {
  title: string;
  stepsToReproduce: string[];
  expectedResult: string;
  actualResult: string;
  environment: string;
  evidence: Array<{ kind: 'screenshot' | 'file' | 'run' | 'console'; url: string }>;
  signature: string;
  runId: string;
  stepIndex: number;
  testCaseId: string;
  bug?: Record<string, unknown>;
}

export interface BugDraftDeps {
  reader: RunReader;
  bugs: BugLookup;
  /** The stores of bugs, test results and test cases (the artifacts room's). */
  stores: { bug: ResourceStore; testResult: ResourceStore; testCase: ResourceStore };
  /** Creates a found_by link from the bug to an artifact (the artifacts room's links). */
  linkFoundBy(principal: Principal, bugId: string, targetId: string): Promise<unknown>;
  absolute(path: string): string;
}

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function expected(step: StepView): string {
  const said = stepSentence(step.action as never);
  const action = step.action as { action?: string };
  return action.action === 'assert'
    ? `${sentence(said).slice(0, -1)}: the check holds.`
    : `${sentence(said).slice(0, -1)}: the step completes.`;
}

function actual(step: StepView): string {
  const error = (step.error ?? {}) as {
    code?: string;
    message?: string;
    triedLocators?: Array<{ by: string; value: string; count?: number }>;
  };
  const parts = [
    `The step ${step.status === 'error' ? 'errored' : 'failed'} with ${error.code ?? 'an unknown code'}: ${error.message ?? '(no message)'}`,
  ];
  if (step.actual) parts.push(`The page showed “${clip(step.actual, 2000)}”.`);
  if (error.triedLocators?.length)
    parts.push(
      `Locators tried: ${error.triedLocators.map((t) => `${t.by} “${t.value}” (${t.count ?? '?'} matched)`).join(', ')}.`,
    );
  const consoleErrors = (step.evidence as { consoleErrors?: string[] } | null)?.consoleErrors;
  if (consoleErrors?.length)
    parts.push(
      `Console errors: ${consoleErrors
        .slice(0, 5)
        .map((e) => clip(e, 300))
        .join(' | ')}`,
    );
  return clip(parts.join(' '), 10_000);
}

function environment(run: RunView, session: SessionFacts | undefined): string {
  const executor = session
    ? `${session.executor}${session.name ? ` “${session.name}”` : ''}${session.version ? ` version ${session.version}` : ''}`
    : 'unknown (the run never reached an executor)';
  const caps = (session?.capabilities ?? {}) as Record<string, unknown>;
  const browser = typeof caps.browser === 'string' ? caps.browser : 'not reported by the executor';
  const names = run.varNames.length ? run.varNames.join(', ') : 'none';
  return clip(
    `Executor: ${executor}; session ${run.sessionId ?? '-'}. Browser: ${browser}. Variables (names only): ${names}.`,
    500,
  );
}

export async function draftBug(
  deps: BugDraftDeps,
  principal: Principal,
  body: { runId: string; stepIndex: number; save?: boolean; severity?: string },
): Promise<BugDraft> {
  if (body.save && !hasScope(principal, 'write'))
    throw errors.forbidden('Saving a bug needs a write key; a read key may draft one');
  const run = await deps.reader.run(principal, body.runId);
  const step = run.steps.find((s) => s.stepIndex === body.stepIndex);
  if (!step)
    throw errors.validation('No such step', [
      { field: 'body.stepIndex', message: `run ${run.id} has steps 0 to ${run.steps.length - 1}` },
    ]);
  const name = stepName(stepPlace(run.steps, step.stepIndex, run.testCases as Array<{ title?: string }>));
  if (step.status !== 'fail' && step.status !== 'error') {
    throw errors.validation('The step did not fail', [
      { field: 'body.stepIndex', message: `${name} is ${step.status}; a bug is drafted from a failed or errored step` },
    ]);
  }
  const session = run.sessionId
    ? await deps.reader.session(principal.projectId, run.sessionId).catch(() => undefined)
    : undefined;
  const caseTitle = (run.testCases as Array<{ title?: string }>)[step.caseIndex]?.title ?? step.testCaseId;
  const steps = run.steps.filter((s) => s.caseIndex === step.caseIndex && s.stepIndex <= step.stepIndex);
  const error = (step.error ?? {}) as { code?: string };
  const screenshotUrl = (step.evidence as { screenshotUrl?: string } | null)?.screenshotUrl;
  const files = (step.evidence as { files?: Array<{ downloadUrl?: string }> } | null)?.files ?? [];
  const draft: BugDraft = {
    title: clip(
      `${caseTitle}: ${stepSentence(step.action as never)} ${step.status === 'error' ? 'errors' : 'fails'} (${error.code ?? 'unknown'})`,
      300,
    ),
    stepsToReproduce: steps.map((s) => clip(sentence(stepSentence(s.action as never)), 2000)),
    expectedResult: clip(expected(step), 10_000),
    actualResult: actual(step),
    environment: environment(run, session),
    evidence: [
      ...(screenshotUrl ? [{ kind: 'screenshot' as const, url: deps.absolute(screenshotUrl) }] : []),
      ...files.flatMap((f) => (f.downloadUrl ? [{ kind: 'file' as const, url: deps.absolute(f.downloadUrl) }] : [])),
      { kind: 'run', url: deps.absolute(`/api/v1/otp/runs/${run.id}`) },
      { kind: 'console', url: deps.absolute(`/console/runs/${run.id}`) },
    ],
    signature: signatureOfStep(step),
    runId: run.id,
    stepIndex: step.stepIndex,
    testCaseId: step.testCaseId,
  };
  if (!body.save) return draft;
  return { ...draft, bug: await save(deps, principal, draft, name, body.severity ?? 'major') };
}

/** The test result the run recorded for the case, else the test case: what found the bug. */
async function finder(deps: BugDraftDeps, principal: Principal, draft: BugDraft): Promise<string> {
  const results = await deps.stores.testResult.list(principal, {
    otpRunId: draft.runId,
    testCaseId: draft.testCaseId,
    limit: 1,
  } as never);
  if (results.items[0]) return results.items[0].id as string;
  const testCase = await deps.stores.testCase.get(principal, draft.testCaseId).catch(() => undefined);
  if (testCase) return testCase.id as string;
  throw errors.conflict(`Neither a test result nor the test case ${draft.testCaseId} is left to link the bug to`, {
    testCaseId: draft.testCaseId,
  });
}

async function save(
  deps: BugDraftDeps,
  principal: Principal,
  draft: BugDraft,
  /** The failed step as people read it (machines/step-names.ts). */
  step: string,
  severity: string,
): Promise<Record<string, unknown>> {
  const target = await finder(deps, principal, draft);
  const bug = await deps.stores.bug.create(principal, {
    title: draft.title,
    description: `Drafted from ${step} of OTP run ${draft.runId} (failure signature ${draft.signature}).\n\nEvidence:\n${draft.evidence.map((e) => `- ${e.kind}: ${e.url}`).join('\n')}`,
    severity,
    stepsToReproduce: draft.stepsToReproduce,
    expectedResult: draft.expectedResult,
    actualResult: draft.actualResult,
    environment: draft.environment,
    labels: ['otp', draft.signature],
  });
  try {
    await deps.linkFoundBy(principal, bug.id as string, target);
    await deps.bugs.link(principal.projectId, draft.signature, bug.id as string);
  } catch (err) {
    // The bug goes with its links: a draft saved is saved whole or not at all.
    await deps.stores.bug.remove(principal, bug.id as string, undefined).catch(() => undefined);
    throw err;
  }
  return bug;
}
