// The MCP tools: the spec's six (svc_otp_*, svc_create/update_test_case) and the reads an agent
// needs. Each tool is a door onto the command its REST route runs (the same run commands, views and
// stores, through the McpBackend port wired in src/service.ts), takes the schema that route validates with,
// and needs the scope the route needs: tier 1 tools read, tier 2 tools write.

import { isFailure } from '../../machines/counts.js';
import { stepName, stepPlace } from '../../machines/step-names.js';
import { isFinalRunStatus } from '../../machines/types.js';
import { AI_CHARGES } from '../ai/charges.js';
import type { FailuresQuery } from '../ai/clusters.js';
import { flakyQuery } from '../ai/index.js';
import type { AiOperations } from '../ai/routes.js';
import { type BugDraftBody, BugDraftBodySchema, failuresQuery } from '../ai/schemas.js';
import { artifactSchemas } from '../artifacts/index.js';
import type { Principal, Scope } from '../auth/principal.js';
import { sessionsQuery } from '../otp/http/routes.js';
import type { RunCommands } from '../otp/runs/commands.js';
import { type RunRequest, RunRequestSchema } from '../otp/runs/request.js';
import type { RunView, StepView } from '../otp/store/run-views.js';
import type { ListQuery, ResourceStore } from '../rest/resource/store.js';
import type { RouteCharge } from '../rest/route.js';
import type { JsonSchema } from '../validation/schema-registry.js';
import { schemaById } from '../validation/schema-registry.js';
import { bundle, objectOf, withProperties } from './schemas.js';

/** What the tools need of the service: the functions the REST routes call. */
export interface McpBackend {
  /** The run commands (src/otp/runs), as every door calls them. */
  runs: Pick<RunCommands, 'start' | 'read' | 'awaitVerdict' | 'cancel'>;
  sessions(principal: Principal, query: Record<string, unknown>): Promise<unknown>;
  testCases: ResourceStore;
  requirements: ResourceStore;
  coverage(principal: Principal, kind: 'requirement', id: string): Promise<unknown>;
  /** What GET /releases/{id}/readiness answers. */
  readiness(principal: Principal, releaseId: string): Promise<unknown>;
  /** GET /ai/flaky (its tool declares the route's charge). */
  flaky(principal: Principal, query: Record<string, unknown>): Promise<unknown>;
  /** Absolute URL of a path on this service (evidence links). */
  absolute(path: string): string;
  /** The ai/* group: failure clusters, triage, bug drafts, and the meter the tools' charges go to. */
  ai: Pick<AiOperations, 'meter' | 'clusters' | 'triage' | 'draftBug'>;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  /** The REST operation this tool is a door onto (its schema and scope), when there is one. */
  operationId?: string;
  inputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** What a call costs the project's AI allowance: its REST route's (src/ai/charges.ts), charged by the server before the call. */
  charge?: RouteCharge;
  call(backend: McpBackend, principal: Principal, args: Record<string, unknown>): Promise<unknown>;
}

/** The longest a tool call waits for a verdict: under the 60 s an MCP client waits for an answer by default. */
export const MAX_WAIT_MS = 55_000;

const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const id = (ref: string, field = 'id') => bundle((schemaById(ref).properties as Record<string, JsonSchema>)[field]!);
const testCase = artifactSchemas.get('test_case')!;
const requirement = artifactSchemas.get('requirement')!;
const runId = { ...id('OtpRunSummary'), description: 'The run (otr_...)' };
const releaseId = { ...id('Release'), pattern: '^rel_', description: 'The release (rel_...)' };

/** What an agent needs to act on a verdict: the steps that did not pass, with their evidence as links. */
export function failingSteps(run: RunView, absolute: (path: string) => string) {
  return run.steps
    .filter((s: StepView) => isFailure(s.status))
    .map((s) => {
      const evidence = (s.evidence ?? null) as {
        screenshotUrl?: string;
        files?: Array<{ downloadUrl?: string }>;
      } | null;
      const links = [
        ...(evidence?.screenshotUrl ? [absolute(evidence.screenshotUrl)] : []),
        ...(evidence?.files ?? []).flatMap((f) => (f.downloadUrl ? [absolute(f.downloadUrl)] : [])),
      ];
      return {
        stepIndex: s.stepIndex,
        step: stepName(stepPlace(run.steps, s.stepIndex, run.testCases)),
        testCaseId: s.testCaseId,
        label: s.label,
        status: s.status,
        action: s.action,
        error: s.error,
        actual: s.actual,
        textReplaced: s.textReplaced,
        evidence: s.evidence,
        evidenceLinks: links,
      };
    });
}

function report(run: RunView, absolute: (path: string) => string) {
  const { steps: _steps, ...summary } = run;
  const finished = isFinalRunStatus(run.status);
  return { run: summary, finished, failingSteps: failingSteps(run, absolute) };
}

export const tools: ToolDef[] = [
  {
    name: 'svc_otp_run',
    title: 'Run test cases',
    description:
      'Starts an OTP run of test cases (testCaseIds) or a plan (planId) on an executor session of the project, as POST /api/v1/otp/runs. With waitMs, waits that long (at most 55000) for the verdict and answers it with the failing steps and links to their evidence; otherwise answers at once (status queued or running).',
    scope: 'write',
    operationId: 'startOtpRun',
    inputSchema: withProperties(bundle(RunRequestSchema), {
      waitMs: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_WAIT_MS,
        default: 0,
        description: 'How long to wait for the verdict, in ms (0: do not wait)',
      },
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async call(backend, principal, { waitMs, ...request }) {
      const started = await backend.runs.start(principal, request as RunRequest);
      const run =
        (waitMs as number) > 0 ? await backend.runs.awaitVerdict(principal, started.id, waitMs as number) : started;
      return report(run, backend.absolute);
    },
  },
  {
    name: 'svc_otp_status',
    title: 'Status of a run',
    description:
      'Status and counts of an OTP run, with its failing steps (error, actual value, evidence links); while it is queued, its queue position and estimated start (run.queue). As GET /api/v1/otp/runs/{id} without the passing steps.',
    scope: 'read',
    operationId: 'getOtpRun',
    inputSchema: objectOf({ runId }, ['runId']),
    annotations: read,
    call: async (backend, principal, args) =>
      report(await backend.runs.read(principal, args.runId as string), backend.absolute),
  },
  {
    name: 'svc_get_run',
    title: 'Read a run',
    description:
      'An OTP run with every step (status, duration, error, evidence, usedLocator, actual), as GET /api/v1/otp/runs/{id}, plus its failing steps with absolute evidence links.',
    scope: 'read',
    operationId: 'getOtpRun',
    inputSchema: objectOf({ runId }, ['runId']),
    annotations: read,
    async call(backend, principal, args) {
      const run = await backend.runs.read(principal, args.runId as string);
      return { ...run, failingSteps: failingSteps(run, backend.absolute) };
    },
  },
  {
    name: 'svc_otp_sessions',
    title: 'Executor sessions',
    description:
      'Executor sessions of the project (connected ones unless status says otherwise), as GET /api/v1/otp/sessions.',
    scope: 'read',
    operationId: 'listOtpSessions',
    inputSchema: bundle(sessionsQuery),
    annotations: read,
    call: (backend, principal, args) => backend.sessions(principal, args),
  },
  {
    name: 'svc_otp_cancel',
    title: 'Cancel a run',
    description:
      'Cancels a queued or running OTP run and answers it (normally cancelled), as POST /api/v1/otp/runs/{id}/cancel. A finished run is a CONFLICT error.',
    scope: 'write',
    operationId: 'cancelOtpRun',
    inputSchema: objectOf({ runId }, ['runId']),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    call: async (backend, principal, args) =>
      report(await backend.runs.cancel(principal, args.runId as string), backend.absolute),
  },
  {
    name: 'svc_create_test_case',
    title: 'Create a test case',
    description:
      'Creates a test case whose steps carry OTP actions in steps[].otp, as POST /api/v1/tests/cases. Counts toward the artifact quota (QUOTA_EXCEEDED when used up).',
    scope: 'write',
    operationId: 'createTestCase',
    inputSchema: bundle(testCase.create),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    call: (backend, principal, args) => backend.testCases.create(principal, args),
  },
  {
    name: 'svc_update_test_case',
    title: 'Change a test case',
    description:
      'Changes a test case (JSON merge patch in `patch`: the fields given replace the stored ones, null removes an optional one), as PATCH /api/v1/tests/cases/{id}. With `version`, only that revision is changed (PRECONDITION_FAILED otherwise).',
    scope: 'write',
    operationId: 'updateTestCase',
    inputSchema: objectOf(
      {
        id: id('TestCase'),
        patch: bundle(testCase.update),
        version: { type: 'integer', minimum: 1, description: 'Change only this revision of the test case' },
      },
      ['id', 'patch'],
    ),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    call: (backend, principal, args) =>
      backend.testCases.update(
        principal,
        args.id as string,
        args.patch as Record<string, unknown>,
        args.version === undefined ? undefined : [args.version as number],
      ),
  },
  {
    name: 'svc_get_test_case',
    title: 'Read a test case',
    description: 'A test case with its steps, as GET /api/v1/tests/cases/{id}.',
    scope: 'read',
    operationId: 'getTestCase',
    inputSchema: objectOf({ id: id('TestCase') }, ['id']),
    annotations: read,
    call: (backend, principal, args) => backend.testCases.get(principal, args.id as string),
  },
  {
    name: 'svc_list_test_cases',
    title: 'List test cases',
    description: 'Test cases of the project, filtered and paged by cursor, as GET /api/v1/tests/cases.',
    scope: 'read',
    operationId: 'listTestCases',
    inputSchema: bundle(testCase.query),
    annotations: read,
    call: (backend, principal, args) => backend.testCases.list(principal, args as ListQuery),
  },
  {
    name: 'svc_list_requirements',
    title: 'Requirements and their coverage',
    description:
      'Requirements of the project, filtered and paged as GET /api/v1/requirements, each with its coverage (the test cases that cover it and how they last fared, as GET /api/v1/requirements/{id}/coverage).',
    scope: 'read',
    operationId: 'listRequirements',
    inputSchema: bundle(requirement.query),
    annotations: read,
    async call(backend, principal, args) {
      const page = await backend.requirements.list(principal, args as ListQuery);
      const items = [];
      for (const item of page.items)
        items.push({ ...item, coverage: await backend.coverage(principal, 'requirement', item.id as string) });
      return { ...page, items };
    },
  },
  {
    name: 'svc_release_readiness',
    title: 'Release readiness',
    description:
      'Whether a release may ship, as GET /api/v1/releases/{id}/readiness: a verdict (ready, at_risk, blocked) and every rule behind it (planned requirements covered and last passing, pass rate, open bugs by severity, flaky and quarantined cases, new failures, suspect coverage), each passed, failed or undefined, with the records behind it.',
    scope: 'read',
    operationId: 'getReleaseReadiness',
    inputSchema: objectOf({ releaseId }, ['releaseId']),
    annotations: read,
    call: (backend, principal, args) => backend.readiness(principal, args.releaseId as string),
  },
  {
    name: 'svc_list_failures',
    title: 'Failure clusters',
    description:
      'Failed steps of the project grouped by cause (signature: error code, action, locator, normalised message), newest first, as GET /api/v1/ai/failures: counts of the window (30 days unless since/until), runs and cases affected, the newest example with its screenshot link, the bugs filed. status new lists the causes first seen in the window.',
    scope: 'read',
    operationId: 'listFailureClusters',
    inputSchema: bundle(failuresQuery),
    annotations: read,
    charge: AI_CHARGES.failures,
    call: (backend, principal, args) => backend.ai.clusters(principal, args as FailuresQuery),
  },
  {
    name: 'svc_triage_run',
    title: 'Triage a run',
    description:
      'Why each failed test case of a finished run failed, as POST /api/v1/ai/runs/{id}/triage: a category (product_regression, locator_drift, environment, flaky, known_issue), a confidence, the facts that led there, similar earlier failures and the action to take. Deterministic; corrections and project rules win over the facts.',
    scope: 'read',
    operationId: 'triageRun',
    inputSchema: objectOf({ runId }, ['runId']),
    annotations: read,
    charge: AI_CHARGES.triage,
    call: (backend, principal, args) => backend.ai.triage(principal, args.runId as string),
  },
  {
    name: 'svc_draft_bug',
    title: 'Draft a bug from a failed step',
    description:
      'A bug written from a failed step of a run, as POST /api/v1/ai/bugs/draft: title, steps to reproduce, expected and actual, environment (variable names, never values), evidence links. With save (needs scope write; counts toward the artifact quota) the bug is created and linked found_by to the test result, else the test case.',
    scope: 'read',
    operationId: 'draftBug',
    inputSchema: bundle(BugDraftBodySchema),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    charge: AI_CHARGES.bugDraft,
    call: (backend, principal, args) => backend.ai.draftBug(principal, args as BugDraftBody),
  },
  {
    name: 'svc_list_flaky',
    title: 'Flaky test cases',
    description:
      'Test cases ranked by flakiness from their recent history (outcome flips of the same version, passes on retry), each with its status (flaky, broken, stable, insufficient), the reasons in words, the runs that show it and its quarantine, as GET /api/v1/ai/flaky. Counts against the monthly AI allowance (ai_quota_exceeded when used up).',
    scope: 'read',
    operationId: 'listFlakyTestCases',
    inputSchema: bundle(flakyQuery),
    annotations: read,
    charge: AI_CHARGES.flaky,
    call: (backend, principal, args) => backend.flaky(principal, args),
  },
];
