// A queued run of one step written straight through the store: no POST and no dispatch, so nothing
// wakes a claim for it (the tests that use it say what should).
import { newId } from '../../src/ids.js';
import type { RunStore } from '../../src/otp/store/run-store.js';

export interface OneStepRun {
  tenantId: string;
  projectId: string;
  /** The session it waits for; none: any session of the project. */
  requestedSessionId?: string | null;
  /** The test case it runs (a made-up id when the test has none). */
  testCaseId?: string;
  action?: Record<string, unknown>;
  id?: string;
}

/** Inserts the run, queued; answers its id. */
export async function insertOneStepRun(store: RunStore, run: OneStepRun): Promise<string> {
  const id = run.id ?? newId('otr');
  const testCaseId = run.testCaseId ?? 'tc_x';
  await store.insertRun({
    id,
    tenantId: run.tenantId,
    projectId: run.projectId,
    requestedSessionId: run.requestedSessionId ?? null,
    vars: {},
    allowedOrigins: [],
    testCases: [{ id: testCaseId, title: 'one step', steps: 1 }],
    planId: null,
    testRunId: null,
    finishTestRun: false,
    steps: [
      {
        stepIndex: 0,
        caseIndex: 0,
        testCaseId,
        action: (run.action ?? { action: 'navigate', url: 'https://a.test' }) as never,
        timeoutMs: 5000,
        continueOnFail: false,
      },
    ],
  });
  return id;
}
