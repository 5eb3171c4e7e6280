// The runner's page script (bundled by src/recorder/bundle.ts, injected with context.addInitScript
// into every frame of the recording's context): steps go to Node through the binding __otpRecord,
// __otpRecorderFlush is what Recorder.settle() calls, and __otpIframeSelector names an iframe for the
// `frame` of a step recorded inside it (the extension's content script uses the same function).
import { installRecorder } from './capture.js';
import { iframeSelector } from './locators.js';

const page = window as unknown as {
  __otpRecorderInstalled?: boolean;
  __otpRecord: (message: unknown) => Promise<unknown>;
  __otpRecorderFlush?: () => unknown;
  __otpIframeSelector?: (el: Element) => string;
};

if (!page.__otpRecorderInstalled) {
  page.__otpRecorderInstalled = true;
  // The binding answers a promise; nothing to wait for.
  const recorder = installRecorder((message) => void page.__otpRecord(message).catch(() => {}));
  page.__otpRecorderFlush = recorder.flush;
  page.__otpIframeSelector = iframeSelector;
}
