// The artifacts room's side of the run planner's port (src/otp/engine/test-case-source.ts): test
// cases, plans and test runs read from the artifacts table, so the engine knows neither the table
// nor the JSON each kind keeps in `data`.

import type { Principal } from '../../auth/principal.js';
import type { Db } from '../../db/connect.js';
import type {
  NewTestCase,
  TestCaseSink,
  TestCaseSource,
  TestCaseStep,
  TestCaseToRun,
} from '../../otp/engine/test-case-source.js';
import type { ArtifactStore } from '../store.js';

export class ArtifactTestCaseSource implements TestCaseSource {
  constructor(private readonly db: Db) {}

  /** Artifacts of one kind in one project. */
  private of(projectId: string, kind: 'test_case' | 'test_plan' | 'test_run') {
    return this.db('artifacts').where({ project_id: projectId, kind });
  }

  async testCases(projectId: string, ids: string[]): Promise<TestCaseToRun[]> {
    const rows: Array<{ id: string; version: number; data: { title: string; steps: TestCaseStep[] } }> = await this.of(
      projectId,
      'test_case',
    )
      .whereIn('id', ids)
      .select('id', 'version', 'data');
    return rows.map((row) => ({ id: row.id, title: row.data.title, steps: row.data.steps, version: row.version }));
  }

  async planCaseIds(projectId: string, planId: string): Promise<{ caseIds: string[]; retries?: number } | null> {
    const plan = await this.of(projectId, 'test_plan').where('id', planId).first('data');
    if (!plan) return null;
    return typeof plan.data.retries === 'number'
      ? { caseIds: plan.data.testCaseIds, retries: plan.data.retries }
      : { caseIds: plan.data.testCaseIds };
  }

  async testRunStatus(projectId: string, testRunId: string): Promise<'open' | 'closed' | null> {
    const testRun = await this.of(projectId, 'test_run').where('id', testRunId).first('data');
    if (!testRun) return null;
    // Any status but closed takes results (open is the only other one the schema allows).
    return testRun.data.status === 'closed' ? 'closed' : 'open';
  }
}

/** The artifacts room's side of the recordings' port: a recorded test case is created as REST would. */
export class ArtifactTestCaseSink implements TestCaseSink {
  constructor(private readonly store: ArtifactStore) {}

  async createTestCase(principal: Principal, testCase: NewTestCase): Promise<{ id: string } & Record<string, unknown>> {
    const record = await this.store.create(principal, { ...testCase });
    return record as { id: string } & Record<string, unknown>;
  }
}
