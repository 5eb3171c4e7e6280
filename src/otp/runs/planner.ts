// Turns a run request (POST /otp/runs, svc_otp_run, the console's Run) into a planned run: every check
// happens here, before anything starts.
// Test cases, plans and test runs come through the TestCaseSource port (the artifacts room's records).

import type { StepAction } from '../../../machines/types.js';
import { fillVars, referencedVars } from '../../../machines/vars.js';
import type { Principal } from '../../auth/principal.js';
import { errors, type FieldError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { TestCaseSource } from '../engine/test-case-source.js';
import type { NewRun } from '../store/run-store.js';
import type { RunRequest } from './request.js';

/**
 * The port through which the planner learns which test cases are quarantined at the run's start
 * (the ai room keeps quarantines; wired in src/service.ts). A quarantined case still runs and
 * reports; its failure does not fail the verdict.
 */
export interface QuarantinedCases {
  /** Those of `caseIds` under a quarantine that has not expired. */
  quarantinedAmong(projectId: string, caseIds: string[]): Promise<Set<string>>;
}

export const noQuarantine: QuarantinedCases = { quarantinedAmong: async () => new Set() };

/** A run records its results in a test run of the caller's project that is still open. */
async function checkTestRunOpen(source: TestCaseSource, projectId: string, testRunId: string): Promise<void> {
  const status = await source.testRunStatus(projectId, testRunId);
  if (!status) throw errors.notFound('Test run', testRunId);
  if (status === 'closed') {
    throw errors.conflict(`Test run ${testRunId} is closed; reopen it or start a new one`, { testRunId });
  }
}

/** Origins of the navigate steps, with variables filled, for run.start.allowedOrigins. */
function navigateOrigins(actions: StepAction[], vars: Record<string, string>): string[] {
  const origins = new Set<string>();
  for (const action of actions) {
    if (action.action !== 'navigate' || typeof action.url !== 'string') continue;
    try {
      origins.add(new URL(String(fillVars(action, vars).url)).origin);
    } catch {
      // A relative or malformed URL names no origin; the executor resolves it against the page.
    }
  }
  return [...origins];
}

/** The request names its cases one way, and asks to close a test run only when it names one. */
function checkRequestShape(request: RunRequest, principal: Principal): void {
  if (request.projectId && request.projectId !== principal.projectId)
    throw errors.notFound('Project', request.projectId);
  if (Boolean(request.planId) === Boolean(request.testCaseIds)) {
    throw errors.validation('Give either testCaseIds or planId', [
      { field: 'body', message: 'exactly one of testCaseIds and planId is required' },
    ]);
  }
  if (request.finishTestRun && !request.testRunId) {
    throw errors.validation('finishTestRun needs a testRunId', [
      { field: 'body.finishTestRun', message: 'give the testRunId to close' },
    ]);
  }
}

/** The test case ids the request names (its plan's, or its own), and how an error names each. */
interface RequestedCases {
  caseIds: string[];
  planRetries?: number;
  idField: (i: number) => string;
}

async function requestedCases(source: TestCaseSource, projectId: string, request: RunRequest): Promise<RequestedCases> {
  if (!request.planId) return { caseIds: request.testCaseIds ?? [], idField: (i) => `body.testCaseIds[${i}]` };
  const planned = await source.planCaseIds(projectId, request.planId);
  if (!planned) throw errors.notFound('Test plan', request.planId);
  return { caseIds: planned.caseIds, planRetries: planned.retries, idField: (i) => `plan.testCaseIds[${i}]` };
}

/** The named test cases, in the request's order; every one must exist in the project. */
async function casesOf(source: TestCaseSource, projectId: string, requested: RequestedCases) {
  const found = await source.testCases(projectId, requested.caseIds);
  const byId = new Map(found.map((testCase) => [testCase.id, testCase]));
  const missing: FieldError[] = requested.caseIds.flatMap((id, i) =>
    byId.has(id) ? [] : [{ field: requested.idField(i), message: `test case ${id} not found in this project` }],
  );
  if (missing.length) throw errors.validation('Unknown test cases', missing);
  return requested.caseIds.map((id) => byId.get(id)!);
}

function checkStepCount(totalSteps: number, maxSteps: number): void {
  if (totalSteps <= maxSteps) return;
  throw errors.validation(`The run has ${totalSteps} steps; at most ${maxSteps} are allowed`, [
    { field: 'steps', message: `${totalSteps} steps exceed the limit of ${maxSteps}` },
  ]);
}

/** Every variable a step uses has a value. */
function checkVarsGiven(actions: StepAction[], vars: Record<string, string>): void {
  const unknownVars = [...new Set(actions.flatMap(referencedVars))].filter((name) => !(name in vars));
  if (!unknownVars.length) return;
  throw errors.validation(
    `Variables used by the steps have no value: ${unknownVars.join(', ')}`,
    unknownVars.map((name) => ({
      field: `body.vars.${name}`,
      message: `the steps use {{${name}}}; give it a value`,
    })),
  );
}

export async function planRun(
  source: TestCaseSource,
  principal: Principal,
  request: RunRequest,
  limits: { maxSteps: number; stepTimeoutMs: number },
  quarantine: QuarantinedCases = noQuarantine,
): Promise<NewRun> {
  checkRequestShape(request, principal);
  if (request.testRunId) await checkTestRunOpen(source, principal.projectId, request.testRunId);
  const requested = await requestedCases(source, principal.projectId, request);
  const cases = await casesOf(source, principal.projectId, requested);
  checkStepCount(
    cases.reduce((n, c) => n + c.steps.length, 0),
    limits.maxSteps,
  );

  const retries = request.retries ?? requested.planRetries ?? 0;
  const vars = request.vars ?? {};
  const actions = cases.flatMap((c) => c.steps.map((s) => s.otp));
  checkVarsGiven(actions, vars);

  const quarantined = await quarantine.quarantinedAmong(principal.projectId, [...new Set(requested.caseIds)]);
  let stepIndex = 0;
  const steps = cases.flatMap((testCase, caseIndex) =>
    testCase.steps.map((s) => ({
      stepIndex: stepIndex++,
      caseIndex,
      testCaseId: testCase.id,
      action: s.otp,
      timeoutMs: s.timeoutMs ?? limits.stepTimeoutMs,
      continueOnFail: s.continueOnFail ?? false,
      ...(s.evidence ? { evidence: s.evidence } : {}),
      ...(s.label ? { label: s.label } : {}),
    })),
  );

  return {
    id: newId('otr'),
    tenantId: principal.tenantId,
    projectId: principal.projectId,
    requestedSessionId: request.sessionId ?? null,
    vars,
    allowedOrigins: request.allowedOrigins ?? navigateOrigins(actions, vars),
    testCases: cases.map((c) => ({
      id: c.id,
      title: c.title,
      steps: c.steps.length,
      ...(retries ? { retries } : {}),
      ...(c.version !== undefined ? { version: c.version } : {}),
      ...(quarantined.has(c.id) ? { quarantined: true as const } : {}),
    })),
    planId: request.planId ?? null,
    testRunId: request.testRunId ?? null,
    finishTestRun: request.finishTestRun ?? false,
    steps,
  };
}
