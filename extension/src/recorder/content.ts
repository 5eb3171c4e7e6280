// The recorder's content script: injected by the worker (chrome.scripting) into every frame of the
// tab being recorded, in the extension's isolated world, where the page's scripts cannot see or call
// it. It runs the project's one page recorder (src/recorder/page/, as otp-runner injects it) and
// sends each step to the worker; sensitive text never leaves the page. Untrusted (script-made)
// events record nothing (capture.ts), and nothing the page sends is read here.
import { installRecorder } from '../../../src/recorder/page/capture.js';
import { iframeSelector } from '../../../src/recorder/page/locators.js';
import type { RecordedMessage } from './messages.js';

const world = globalThis as unknown as { __otpRecorderFlush?: () => unknown };

function frameOfThisDocument(): string | undefined {
  try {
    // Null at the top, and for a frame of another origin (its step is then recorded without a frame).
    const element = window.frameElement;
    return element ? iframeSelector(element) : undefined;
  } catch {
    return undefined;
  }
}

if (!world.__otpRecorderFlush) {
  const frame = frameOfThisDocument();
  const recorder = installRecorder((message) => {
    const out: RecordedMessage = { kind: 'otp.recorded', message, ...(frame ? { frame } : {}) };
    // The worker may be waking up; a message it never took is a step the user sees missing.
    chrome.runtime.sendMessage(out).catch(() => {});
  });
  world.__otpRecorderFlush = recorder.flush;
}
