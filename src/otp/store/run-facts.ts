// What other rooms may ask of a run without touching its tables: the assets room checks evidence
// uploads and references against it (its EvidenceRuns port, wired in src/service.ts).
import type { Db } from '../../db/connect.js';

export class RunFacts {
  constructor(private readonly db: Db) {}

  /** The number of steps of a run of the project; undefined when the project has no such run. */
  async totalSteps(projectId: string, runId: string): Promise<number | undefined> {
    const row = await this.db('otp_runs').where({ id: runId, project_id: projectId }).first('total_steps');
    return row?.total_steps;
  }

  /** The project a run belongs to; undefined for an unknown run. */
  async projectOf(runId: string): Promise<string | undefined> {
    const row = await this.db('otp_runs').where('id', runId).first('project_id');
    return row?.project_id;
  }
}
