// The port through which the ai room reads run history: declared here, implemented by the otp/store
// room (RunHistoryStore, src/otp/store/run-history.ts), wired in src/service.ts. The shapes are that
// store's rows (a type-only import: the ai room runs nothing of otp/store).
import type { CaseAttemptRow, LocatorStepRow } from '../otp/store/run-history.js';

/** A test case's attempt in a finished run (attempt 1 first, 2.. for its retries). */
export type CaseAttempt = CaseAttemptRow;
/** A step whose locator candidates tell of drift (healing proposals). */
export type LocatorStep = LocatorStepRow;

export interface HistoryWindow {
  runs: number;
  testCaseId?: string;
}

export interface RunHistory {
  caseAttempts(projectId: string, window: HistoryWindow): Promise<CaseAttempt[]>;
  locatorSteps(projectId: string, window: HistoryWindow): Promise<LocatorStep[]>;
}
