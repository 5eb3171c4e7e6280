// Platform and artifact resources (bugs, tickets, requirements, test runs and results, ...).
// (Filled in by the platform-and-artifacts work.)
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { RouteDef } from '../rest/route.js';

export interface Artifacts {
  routes: RouteDef[];
  /** Called when an OTP run's verdict is durable: records test results for its testRunId. */
  onRunFinished(runId: string): Promise<void>;
}

export async function createArtifacts(_deps: { config: Config; db: Db; log: Logger }): Promise<Artifacts> {
  return { routes: [], onRunFinished: async () => {} };
}
