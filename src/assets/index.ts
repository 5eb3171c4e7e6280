// Asset storage: buckets, drivers, signed downloads, evidence. (Filled in by the asset-storage work.)
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import type { RouteDef } from '../rest/route.js';
import type { StepOutcome } from '../../machines/types.js';

export interface Assets {
  routes: RouteDef[];
  /** Keeps only evidence references that name assets of this run; see RunDriverDeps.verifyEvidence. */
  verifyEvidence(runId: string, outcomes: StepOutcome[]): Promise<StepOutcome[]>;
  stop(): Promise<void>;
}

export async function createAssets(_deps: { config: Config; db: Db; log: Logger }): Promise<Assets> {
  return { routes: [], verifyEvidence: async (_runId, outcomes) => outcomes, stop: async () => {} };
}
