// The artifacts room's side of the run planner's port (src/otp/engine/test-case-source.ts): test
// cases, plans and test runs read from the artifacts table, so the engine knows neither the table
// nor the JSON each kind keeps in `data`.
import type { Db } from '../../db/connect.js';
import type { DedicatedConnection } from '../../db/dedicated-connection.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { NewTestCase, TestCaseSink, TestCaseSource, TestCaseStep, TestCaseToRun } from '../../otp/engine/test-case-source.js';
import type { Principal } from '../../auth/principal.js';
import type { ArtifactStore } from '../store.js';

/** The test cases one run asks for. */
interface CaseRead {
  projectId: string;
  ids: string[];
}

type CaseRow = { id: string; project_id: string; title: string; steps: TestCaseStep[] };

// The test cases of every run being planned at the moment, in one prepared statement: only what
// planning reads (title and steps), by primary key. Each run then keeps the rows of its own project
// among its own ids, so another project's test case is absent to it, as in the scoped query.
const READ_CASES = {
  name: 'otp_plan_cases',
  text: `SELECT id, project_id, data->>'title' AS title, data->'steps' AS steps
           FROM artifacts WHERE kind = 'test_case' AND id = ANY($1::text[])`,
};

export class ArtifactTestCaseSource implements TestCaseSource {
  private readonly reads: GroupCommit<CaseRead, CaseRow[]> | undefined;

  /**
   * With `connection`, the test cases of runs planned at the same moment are read together on it
   * (a group commit of reads): POST /otp/runs neither waits for knex's pool nor builds a query.
   */
  constructor(
    private readonly db: Db,
    private readonly connection?: DedicatedConnection,
  ) {
    if (connection) this.reads = new GroupCommit((batch) => this.readCases(batch));
  }

  /** Artifacts of one kind in one project. */
  private of(projectId: string, kind: 'test_case' | 'test_plan' | 'test_run') {
    return this.db('artifacts').where({ project_id: projectId, kind });
  }

  async testCases(projectId: string, ids: string[]): Promise<TestCaseToRun[]> {
    if (this.reads) {
      const rows = await this.reads.submit({ projectId, ids });
      return rows.map((row) => ({ id: row.id, title: row.title, steps: row.steps }));
    }
    const rows: Array<{ id: string; data: { title: string; steps: TestCaseStep[] } }> = await this.of(projectId, 'test_case')
      .whereIn('id', ids)
      .select('id', 'data');
    return rows.map((row) => ({ id: row.id, title: row.data.title, steps: row.data.steps }));
  }

  /** One statement for the reads of a batch; answers each read the rows of its project among its ids. */
  private async readCases(batch: CaseRead[]): Promise<CaseRow[][]> {
    const ids = [...new Set(batch.flatMap((read) => read.ids))];
    const { rows } = await this.connection!.query<CaseRow>({ ...READ_CASES, values: [ids] });
    return batch.map(({ projectId, ids: wanted }) => {
      const own = new Set(wanted);
      return rows.filter((row) => row.project_id === projectId && own.has(row.id));
    });
  }

  async planCaseIds(projectId: string, planId: string): Promise<string[] | null> {
    const plan = await this.of(projectId, 'test_plan').where('id', planId).first('data');
    return plan ? plan.data.testCaseIds : null;
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
