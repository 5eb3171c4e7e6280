// The messages between the extension's own parts about a recording: the content script's steps,
// the side panel's commands and the state the worker shows it. Only the extension's own pages and
// content scripts can send them (no `externally_connectable`), and the worker still checks each one's
// sender and shape before it acts (recording.ts): a page's DOM feeds the content script, nothing else.
import type { Candidate } from '../../../src/recorder/page/locators.js';
import type { PageMessage } from '../../../src/recorder/steps.js';

/** From the content script in a frame of the recorded tab. */
export interface RecordedMessage {
  kind: 'otp.recorded';
  message: PageMessage;
  /** The iframe the frame is in (a selector), for a step recorded in a child frame of the same origin. */
  frame?: string;
}

export type PanelCommand =
  | { kind: 'otp.panel'; op: 'state' }
  | { kind: 'otp.panel'; op: 'start'; tabId: number; title?: string }
  | { kind: 'otp.panel'; op: 'pause' | 'resume' | 'stop' }
  | { kind: 'otp.panel'; op: 'delete'; stepId: number };

export interface ShownStep {
  id: number;
  action: string;
  sentence: string;
  candidates: Candidate[];
}

/** What the side panel shows; the worker sends it after every change. */
export interface RecorderState {
  kind: 'otp.recorder-state';
  /** recording: under way (paused or not); idle: none (then `saved` or `error` tells how the last ended). */
  status: 'idle' | 'recording' | 'saving';
  paused: boolean;
  /** panel: started here, saved by POST /otp/recordings; service: started over REST, streamed as event.recorded. */
  mode?: 'panel' | 'service';
  tabId?: number;
  title?: string;
  recordingId?: string;
  steps: ShownStep[];
  saved?: { testCaseId?: string; recordingId?: string };
  error?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A content script's message of the right shape (its step is checked again by the service). */
export function isRecordedMessage(v: unknown): v is RecordedMessage {
  if (!isObject(v) || v.kind !== 'otp.recorded' || !isObject(v.message)) return false;
  const m = v.message;
  const step = m.step;
  return (
    typeof m.doc === 'string' &&
    typeof m.seq === 'number' &&
    typeof m.at === 'string' &&
    (m.secret === undefined || typeof m.secret === 'string') &&
    (v.frame === undefined || typeof v.frame === 'string') &&
    isObject(step) &&
    isObject(step.otp) &&
    typeof step.otp.action === 'string'
  );
}

export function isPanelCommand(v: unknown): v is PanelCommand {
  if (!isObject(v) || v.kind !== 'otp.panel') return false;
  switch (v.op) {
    case 'state':
    case 'pause':
    case 'resume':
    case 'stop':
      return true;
    case 'start':
      return Number.isInteger(v.tabId) && (v.title === undefined || typeof v.title === 'string');
    case 'delete':
      return Number.isInteger(v.stepId);
    default:
      return false;
  }
}
