// What REST answers about runs and sessions, read from PostgreSQL (the truth for every process).

import { type CaseOutcome, judgeCase, outcomeStep, tallyOf } from '../../../machines/case-outcome.js';
import { isFailure } from '../../../machines/counts.js';
import { type EvidenceFile, evidenceByStep } from '../../assets/evidence/evidence-service.js';
import { downloadPath } from '../../assets/items/view.js';
import type { Db } from '../../db/connect.js';
import { errors } from '../../errors.js';
import { type Page, paginate } from '../../rest/pagination.js';
import { withStandings } from './queue-views.js';
import type { RunRow, SessionRow, StepAttemptRow, StepRow } from './view-rows.js';
import type { RunSummary, RunView, SessionView, StepAttemptView, StepView } from './view-types.js';

export type { RunSummary, RunView, SessionView, StepAttemptView, StepView } from './view-types.js';

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

/** A NOT NULL timestamp column. */
const isoOf = (value: Date): string => value.toISOString();

/** A run row (every column) as REST answers it without steps, and as `run.finished` reports it. */
export function runSummary(row: RunRow): RunSummary {
  return {
    id: row.id,
    runId: row.id,
    projectId: row.project_id,
    status: row.status,
    sessionId: row.session_id,
    requestedSessionId: row.requested_session_id,
    planId: row.plan_id,
    testRunId: row.test_run_id,
    finishTestRun: row.finish_test_run,
    testCases: row.test_cases,
    allowedOrigins: row.allowed_origins,
    varNames: Object.keys(row.vars ?? {}),
    totalSteps: row.total_steps,
    counts: { passed: row.passed, failed: row.failed, skipped: row.skipped, total: row.total_steps },
    reason: row.reason,
    cancelRequested: row.cancel_requested_at !== null,
    createdAt: isoOf(row.created_at),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    durationMs: row.duration_ms,
    ...queueOf(row),
  };
}

const PRIORITIES = ['gate', 'normal', 'batch'] as const;

/** The run's queue group and class, when its row was read with them; a run from before queues has none. */
function queueOf(row: RunRow): Pick<RunSummary, 'group' | 'priority' | 'supersededBy'> {
  if (row.queue_group === undefined || row.queue_owner === '') return {};
  return {
    group: row.queue_group,
    priority: PRIORITIES[row.queue_rank as 0 | 1 | 2] ?? 'normal',
    ...(row.superseded_by ? { supersededBy: row.superseded_by } : {}),
  };
}

const hasRetries = (row: { test_cases?: Array<{ retries?: number }> }) => (row.test_cases ?? []).some((c) => c.retries);

/** The attempts before the last of a run's retried cases, oldest first. */
async function earlierAttempts(db: Db, runId: string, steps: StepView[]): Promise<StepAttemptView[]> {
  const rows: StepAttemptRow[] = await db('otp_run_step_attempts')
    .where('run_id', runId)
    .orderBy(['attempt', 'step_index'])
    .select('*');
  return rows.map((a) => {
    const step = steps[a.step_index]!;
    return {
      stepIndex: a.step_index,
      caseIndex: step.caseIndex,
      testCaseId: step.testCaseId,
      attempt: a.attempt,
      status: a.status,
      source: a.source,
      durationMs: a.duration_ms,
      error: a.error,
      evidence: a.evidence,
      actual: a.actual,
      usedLocator: a.used_locator,
      finishedAt: iso(a.finished_at),
    };
  });
}

/** A test case of a run with its outcome (machines/case-outcome.ts) and the step that decided it. */
export interface JudgedCase {
  outcome: CaseOutcome;
  /** The stepIndex of the step that decided a failed, error or cancelled case. */
  failingStepIndex?: number;
}

/** Each test case's outcome from its steps (its last attempt's: the steps REST answers). */
function judgedCases(caseCount: number, steps: readonly StepView[]): JudgedCase[] {
  const byCase: StepView[][] = Array.from({ length: caseCount }, () => []);
  for (const s of steps) byCase[s.caseIndex]?.push(s);
  return byCase.map((caseSteps) => {
    const attempt = caseSteps.reduce((most, s) => Math.max(most, s.attempt), 1);
    const { outcome, failingStep } = judgeCase(tallyOf(caseSteps.map(outcomeStep), attempt));
    return { outcome, ...(failingStep ? { failingStepIndex: failingStep.stepIndex } : {}) };
  });
}

/** The run's test cases, each with its outcome. */
function withOutcomes(view: RunView): RunView {
  const judged = judgedCases(view.testCases.length, view.steps);
  return { ...view, testCases: view.testCases.map((c, i) => ({ ...c, ...judged[i] })) };
}

function stepView(s: StepRow): StepView {
  return {
    stepIndex: s.step_index,
    caseIndex: s.case_index,
    testCaseId: s.test_case_id,
    label: s.label,
    action: s.action,
    status: s.status,
    source: s.source,
    durationMs: s.duration_ms,
    error: s.error,
    evidence: s.evidence,
    actual: s.actual,
    usedLocator: s.used_locator,
    textReplaced: s.text_replaced ?? null,
    ...(s.tried_locators ? { triedLocators: s.tried_locators } : {}),
    finishedAt: iso(s.finished_at),
    attempt: s.attempt ?? 1,
  };
}

/** Download links beside the evidence a step points at, and the files uploaded for it. */
function withEvidenceLinks(step: StepView, files: EvidenceFile[] | undefined): StepView {
  const evidence = step.evidence as { screenshotAssetId?: string } | null;
  if (!evidence?.screenshotAssetId && !files) return step;
  return {
    ...step,
    evidence: {
      ...evidence,
      ...(evidence?.screenshotAssetId ? { screenshotUrl: downloadPath(evidence.screenshotAssetId) } : {}),
      ...(files ? { files } : {}),
    },
  };
}

// The run and its steps in one round trip: the steps come as one JSON array (json_agg), which also
// spares the driver a row per step. Timestamps inside JSON are ISO strings, not Dates.
/** A step row as json_agg gives it: its timestamp an ISO string. */
type StepJson = Omit<StepRow, 'finished_at'> & { finished_at: string | null };

const STEPS_JSON = `coalesce((SELECT json_agg(s ORDER BY s.step_index) FROM otp_run_steps s WHERE s.run_id = otp_runs.id), '[]') AS steps_json`;

export async function readRun(db: Db, projectId: string, runId: string): Promise<RunView> {
  const row = await db('otp_runs').where({ id: runId, project_id: projectId }).first('otp_runs.*', db.raw(STEPS_JSON));
  if (!row) throw errors.notFound('Run', runId);
  const files = await evidenceByStep(db, runId);
  const steps = (row.steps_json as StepJson[]).map((s) =>
    withEvidenceLinks(
      stepView({ ...s, finished_at: s.finished_at === null ? null : new Date(s.finished_at) }),
      files.get(s.step_index),
    ),
  );
  const [summary] = await withStandings(db, projectId, [runSummary(row)]);
  const view = withOutcomes({ ...summary!, steps });
  if (hasRetries(row)) {
    view.earlierAttempts = await earlierAttempts(db, runId, steps);
    const flaky = view.testCases.filter((c) => c.outcome === 'flaky').length;
    view.counts = { ...view.counts, flaky };
  }
  if (row.status === 'running' || row.status === 'queued') {
    // Counts of a run in progress come from the steps recorded so far.
    for (const s of steps) {
      if (s.status === 'pass') view.counts.passed++;
      else if (isFailure(s.status)) view.counts.failed++;
      else if (s.status === 'skip') view.counts.skipped++;
    }
  }
  return view;
}

/**
 * The view of a run just inserted (POST /otp/runs), from its row and its planned steps: every step
 * pending, nothing recorded yet. The same as readRun would answer at that instant, without reading
 * back a hundred step rows the caller just wrote.
 */
export function newRunView(
  row: RunRow,
  steps: ReadonlyArray<{ stepIndex: number; caseIndex: number; testCaseId: string; label?: string; action: unknown }>,
): RunView {
  const summary = runSummary(row);
  return withOutcomes({
    ...summary,
    ...(hasRetries(row) ? { earlierAttempts: [], counts: { ...summary.counts, flaky: 0 } } : {}),
    steps: steps.map((s) => ({
      stepIndex: s.stepIndex,
      caseIndex: s.caseIndex,
      testCaseId: s.testCaseId,
      label: s.label ?? null,
      action: s.action as StepView['action'],
      status: 'pending',
      source: null,
      durationMs: null,
      error: null,
      evidence: null,
      actual: null,
      usedLocator: null,
      textReplaced: null,
      finishedAt: null,
      attempt: 1,
    })),
  });
}

export interface RunFilter {
  status?: string;
  /** Runs that include this test case. */
  testCaseId?: string;
  /** Runs driven by this executor session (the console's session page). */
  sessionId?: string;
}

function runsOf(db: Db, projectId: string, filter: RunFilter) {
  const query = db('otp_runs').where('project_id', projectId);
  if (filter.status) query.where('status', filter.status);
  if (filter.testCaseId) query.whereRaw('test_cases @> ?::jsonb', [JSON.stringify([{ id: filter.testCaseId }])]);
  if (filter.sessionId) query.where('session_id', filter.sessionId);
  return query;
}

export async function listRuns(
  db: Db,
  projectId: string,
  page: { limit?: number; cursor?: string } & RunFilter,
): Promise<Page<RunSummary>> {
  const listed = await paginate(runsOf(db, projectId, page), page, runSummary);
  return { ...listed, items: await withStandings(db, projectId, listed.items) };
}

/** The newest runs first (the console's list), with the same filters. */
export async function latestRuns(
  db: Db,
  projectId: string,
  filter: RunFilter & { limit: number },
): Promise<RunSummary[]> {
  const rows = await runsOf(db, projectId, filter).orderBy('id', 'desc').limit(filter.limit);
  return withStandings(db, projectId, rows.map(runSummary));
}

export function sessionView(row: SessionRow): SessionView {
  return {
    id: row.id,
    sessionId: row.id,
    projectId: row.project_id,
    executor: row.executor,
    name: row.name,
    version: row.version,
    capabilities: row.capabilities,
    maxParallel: row.max_parallel,
    status: row.status,
    activeRuns: row.active_runs ?? 0,
    connectedAt: isoOf(row.connected_at),
    closedAt: iso(row.closed_at),
    closeCode: row.close_code,
    closeReason: row.close_reason,
  };
}

function sessionsOf(db: Db, projectId: string) {
  return db('otp_sessions as s')
    .where('s.project_id', projectId)
    .select(
      's.*',
      db.raw(`(SELECT count(*) FROM otp_runs r WHERE r.session_id = s.id AND r.status = 'running') AS active_runs`),
    );
}

export async function readSession(db: Db, projectId: string, sessionId: string): Promise<SessionView> {
  const row = await sessionsOf(db, projectId).where('s.id', sessionId).first();
  if (!row) throw errors.notFound('Session', sessionId);
  return sessionView(row);
}

export function listSessions(
  db: Db,
  projectId: string,
  page: { limit?: number; cursor?: string; status?: string },
): Promise<Page<SessionView>> {
  const query = sessionsOf(db, projectId);
  if (page.status !== 'all') query.where('s.status', page.status ?? 'open');
  return paginate(query, page, sessionView, 's.id');
}

/** The views REST answers, over the store's database handle (the http room holds none). */
export class RunViews {
  constructor(private readonly db: Db) {}

  run(projectId: string, runId: string): Promise<RunView> {
    return readRun(this.db, projectId, runId);
  }

  /** The runs given, each queued one with where it stands (a run just posted, as GET would answer it). */
  withStandings<T extends RunSummary>(projectId: string, runs: T[]): Promise<T[]> {
    return withStandings(this.db, projectId, runs);
  }

  runs(projectId: string, page: { limit?: number; cursor?: string } & RunFilter): Promise<Page<RunSummary>> {
    return listRuns(this.db, projectId, page);
  }

  latestRuns(projectId: string, filter: RunFilter & { limit: number }): Promise<RunSummary[]> {
    return latestRuns(this.db, projectId, filter);
  }

  session(projectId: string, sessionId: string): Promise<SessionView> {
    return readSession(this.db, projectId, sessionId);
  }

  sessions(projectId: string, page: { limit?: number; cursor?: string; status?: string }): Promise<Page<SessionView>> {
    return listSessions(this.db, projectId, page);
  }
}
