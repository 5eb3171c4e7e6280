// The port through which the run planner reads what a run is made of. Test cases, plans and test
// runs are artifacts, kept by the artifacts room in its own table and JSON shape; the engine declares
// here only what planning needs and the artifacts room implements it
// (src/artifacts/tests/test-case-source.ts, wired in src/service.ts). Every read is scoped to the
// caller's project: another project's record is absent, never visible.

import type { Principal } from '../../auth/principal.js';
import type { TestCaseStep } from '../protocol/schemas/index.js';

/** One step of a test case as stored (validated by the TestCaseStep schema when it was written). */
export type { TestCaseStep };

export interface TestCaseToRun {
  id: string;
  title: string;
  steps: TestCaseStep[];
  /** The test case's version (revision) as it is run: flakiness compares runs of the same version. */
  version?: number;
}

export interface TestCaseSource {
  /** The project's test cases among `ids`, in any order; unknown ids are left out (one read for all). */
  testCases(projectId: string, ids: string[]): Promise<TestCaseToRun[]>;
  /** The plan's test case ids in run order and its default retries, or null when the project has no such plan. */
  planCaseIds(projectId: string, planId: string): Promise<{ caseIds: string[]; retries?: number } | null>;
  /** Whether the project's test run still takes results, or null when it has no such test run. */
  testRunStatus(projectId: string, testRunId: string): Promise<'open' | 'closed' | null>;
}

/** A test case made from a recording (its steps already valid TestCaseSteps). */
export interface NewTestCase {
  title: string;
  description?: string;
  steps: TestCaseStep[];
  labels?: string[];
}

/**
 * The port through which recordings become test cases: the artifacts room writes them (quota and
 * all, as a REST create would) and answers the record as GET /tests/cases/:id shows it.
 */
export interface TestCaseSink {
  createTestCase(principal: Principal, testCase: NewTestCase): Promise<{ id: string } & Record<string, unknown>>;
}
