// The port through which the ai room reads run history: declared here, implemented by the otp/store
// room (RunHistoryStore, src/otp/store/run-history.ts), wired in src/service.ts. The shapes are
// spelled out here: the ai room imports nothing of otp/store.
export interface CaseAttempt {
  runId: string;
  createdAt: string;
  testCaseId: string;
  version: number | null;
  caseIndex: number;
  /** 1 for the first run of the case in the run; 2.. for its retries. */
  attempt: number;
  failed: boolean;
  skipped: boolean;
  firstIndex: number;
  failedSteps: number[];
}

export interface LocatorStep {
  runId: string;
  createdAt: string;
  testCaseId: string;
  version: number | null;
  position: number;
  label: string | null;
  status: string;
  locator: { candidates: unknown[] };
  usedLocator: unknown;
  triedLocators: unknown[] | null;
  screenshotAssetId: string | null;
}

export interface HistoryWindow {
  runs: number;
  testCaseId?: string;
}

export interface RunHistory {
  caseAttempts(projectId: string, window: HistoryWindow): Promise<CaseAttempt[]>;
  locatorSteps(projectId: string, window: HistoryWindow): Promise<LocatorStep[]>;
}
