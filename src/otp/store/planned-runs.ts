// The runs this process inserted queued, kept as planned until a claim of this process takes them:
// the claim then need not read their steps back (PostgreSQL building a JSON array of every step,
// this process parsing it). A claim names the ids it knows (CLAIM_RUNS, $6) and gets steps only
// for the others: runs inserted by another process, or forgotten here. Nothing depends on a run
// being remembered; it only saves work, so the memory is bounded and the oldest go first. A run
// claimed by another process stays here until it is the oldest; a cancelled one is forgotten.
import type { ClaimedRun, NewRun } from './run-rows.js';

interface Planned {
  run: ClaimedRun;
  requestedSessionId: string | null;
}

export class PlannedRuns {
  // Per project, in insertion order (ids are time-ordered, so oldest first, as the queue is).
  private readonly byProject = new Map<string, Map<string, Planned>>();
  // Every run, in insertion order, for evicting the oldest.
  private readonly all = new Map<string, { projectId: string; steps: number }>();
  private steps = 0;

  /** `maxSteps`: the planned steps kept at most, over all runs. */
  constructor(private readonly maxSteps = 50_000) {}

  remember(run: NewRun): void {
    if (run.steps.length > this.maxSteps || this.all.has(run.id)) return;
    const { id, projectId, vars, allowedOrigins, testCases, steps, requestedSessionId } = run;
    let project = this.byProject.get(projectId);
    if (!project) this.byProject.set(projectId, (project = new Map()));
    // The steps as a claim reads them back (claimedRunOf): without the test case ids.
    const planned = steps.map(({ testCaseId: _, ...step }) => step);
    project.set(id, { run: { id, projectId, vars, allowedOrigins, testCases, steps: planned }, requestedSessionId });
    this.all.set(id, { projectId, steps: steps.length });
    this.steps += steps.length;
    for (const [oldest] of this.all) {
      if (this.steps <= this.maxSteps) break;
      this.forget(oldest);
    }
  }

  /**
   * The oldest `max` remembered runs that a claim for `sessionId` of `projectId` could take, by id.
   * The caller keeps them through its claim (one may be evicted meanwhile) and forgets those it took.
   */
  candidates(projectId: string, sessionId: string, max: number): Map<string, ClaimedRun> {
    const found = new Map<string, ClaimedRun>();
    let looked = 0;
    // The oldest few only: a project's runs pinned to other sessions are passed over, not searched.
    for (const [id, planned] of this.byProject.get(projectId) ?? []) {
      if (found.size >= max || ++looked > 4 * max + 64) break;
      if (planned.requestedSessionId === null || planned.requestedSessionId === sessionId) found.set(id, planned.run);
    }
    return found;
  }

  get size(): number {
    return this.all.size;
  }

  /** Forgets a run: a claim took it, or it is the oldest and memory is full. */
  forget(id: string): void {
    const entry = this.all.get(id);
    if (!entry) return;
    this.all.delete(id);
    this.steps -= entry.steps;
    const project = this.byProject.get(entry.projectId)!;
    project.delete(id);
    if (!project.size) this.byProject.delete(entry.projectId);
  }
}
