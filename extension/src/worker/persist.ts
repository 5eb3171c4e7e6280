// What must outlive the worker (an MV3 worker is stopped when idle, and may be stopped at any time):
// the session to resume, and for each run its window and every step received with its result, so
// that a restarted worker goes on with the same runs and never performs a step twice. Kept in
// chrome.storage.session (memory of this browser session, not written to disk).
import type { RunStartPayload, StepResultPayload } from '../../../src/otp/protocol/schemas/messages.js';

export interface StepRecord {
  /** The step.exec being answered. */
  ref: string;
  /** The step's action (whether performing it again after a worker restart could change the page). */
  action?: string;
  /** Set once the step was performed. */
  result?: StepResultPayload;
}

export interface RunRecord {
  runId: string;
  start: RunStartPayload;
  windowId?: number;
  tabId?: number;
  /** `${attempt}:${stepIndex}` -> the step. */
  steps: Record<string, StepRecord>;
}

const SESSION_KEY = 'otp:session';
const runKey = (runId: string) => `otp:run:${runId}`;

export async function savedSession(): Promise<string | undefined> {
  const got = await chrome.storage.session.get(SESSION_KEY);
  return typeof got[SESSION_KEY] === 'string' ? (got[SESSION_KEY] as string) : undefined;
}

export async function saveSession(sessionId: string | undefined): Promise<void> {
  if (sessionId) await chrome.storage.session.set({ [SESSION_KEY]: sessionId });
  else await chrome.storage.session.remove(SESSION_KEY);
}

export async function saveRun(run: RunRecord): Promise<void> {
  await chrome.storage.session.set({ [runKey(run.runId)]: run });
}

export async function forgetRun(runId: string): Promise<void> {
  await chrome.storage.session.remove(runKey(runId));
}

export async function savedRuns(): Promise<RunRecord[]> {
  const all = await chrome.storage.session.get(null);
  return Object.entries(all)
    .filter(([key]) => key.startsWith('otp:run:'))
    .map(([, value]) => value as RunRecord);
}
