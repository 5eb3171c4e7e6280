// Frames of an executor session (session.ts): the welcome it answers a hello with, and the frames it
// holds while it has no socket to send on (detached, or moving to another process).
import type { Config } from '../../config.js';
import { buildFrame } from '../protocol/frames.js';

// Frames held for a detached session (run.start, run.cancel, run.finished of its runs; a run holds
// its step.exec itself). Far more than maxParallel runs produce in a resume window.
const MAX_HELD_FRAMES = 1_000;

export interface Welcome {
  sessionId: string;
  /** The hello's id. */
  ref: string;
  otp: Config['otp'];
  apiUrl: string | undefined;
  maxParallel: number;
  /** A session resumed (or transferred): the executor keeps its runs. */
  resumed: boolean;
}

export function welcomeFrame({ sessionId, ref, otp, apiUrl, maxParallel, resumed }: Welcome): string {
  return buildFrame(
    'welcome',
    { sessionId, ref },
    {
      sessionId,
      serverTime: new Date().toISOString(),
      keepaliveSec: otp.keepaliveSec,
      ...(apiUrl ? { apiUrl } : {}),
      limits: {
        maxFrameBytes: otp.maxFrameBytes,
        maxSteps: otp.maxSteps,
        stepTimeoutMs: otp.stepTimeoutMs,
        maxParallel,
        keepaliveSec: otp.keepaliveSec,
      },
      ...(resumed ? { resumed: true } : {}),
    },
  );
}

/** What a session sends while it has no socket, in order, sent when it has one again. */
export class HeldFrames {
  private frames: string[] = [];

  /** False when the frame is dropped: too many are held already. */
  hold(frame: string): boolean {
    if (this.frames.length >= MAX_HELD_FRAMES) return false;
    this.frames.push(frame);
    return true;
  }

  /** The frames held, oldest first; none are held any more. */
  release(): string[] {
    const released = this.frames;
    this.frames = [];
    return released;
  }

  /** Runs whose run.finished is held (they ended while the session was detached). */
  finishedRunIds(): string[] {
    const ids: string[] = [];
    for (const frame of this.frames) {
      const { type, runId } = JSON.parse(frame) as { type: string; runId?: string };
      if (type === 'run.finished' && runId) ids.push(runId);
    }
    return ids;
  }
}
