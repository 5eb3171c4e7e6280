// The runner's page script (bundled by src/recorder/bundle.ts, injected with context.addInitScript
// into every frame of the recording's context): steps go to Node through the binding __otpRecord,
// and __otpRecorderFlush is what Recorder.settle() calls.
import { installRecorder } from './capture.js';

const page = window as unknown as {
  __otpRecorderInstalled?: boolean;
  __otpRecord: (message: unknown) => Promise<unknown>;
  __otpRecorderFlush?: () => unknown;
};

if (!page.__otpRecorderInstalled) {
  page.__otpRecorderInstalled = true;
  // The binding answers a promise; nothing to wait for.
  const recorder = installRecorder((message) => void page.__otpRecord(message).catch(() => {}));
  page.__otpRecorderFlush = recorder.flush;
}
