// The ports through which the ai room reads what other rooms own, wired in src/service.ts. The OTP
// store implements RunFailureSource (src/otp/store/failure-facts.ts); the run commands and views give
// a run and a session as REST answers them.

import type { Principal } from '../auth/principal.js';
import type { FinishedRunFacts, FinishedRunRef } from '../otp/store/failure-facts.js';
import type { RunView } from '../otp/store/run-views.js';

export type { FinishedRunFacts, FinishedRunRef, RunView };

/** Finished runs' cases and failed steps, read after their verdicts. */
export interface RunFailureSource {
  finishedRuns(after: FinishedRunRef | null, before: Date, limit: number): Promise<FinishedRunRef[]>;
  runs(runIds: readonly string[]): Promise<FinishedRunFacts[]>;
}

/** A session as GET /otp/sessions/{id} answers it: what ran a run (its executor and browser). */
export interface SessionFacts {
  executor: string;
  name: string | null;
  version: string | null;
  capabilities: unknown;
}

/** Runs and sessions as the REST routes read them (the run commands, the run views). */
export interface RunReader {
  run(principal: Principal, runId: string): Promise<RunView>;
  session(projectId: string, sessionId: string): Promise<SessionFacts>;
}
