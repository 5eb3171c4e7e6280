// `otp-runner [options]` (bin/otp-runner.mjs): runs until interrupted; `otp-runner record ...` is the
// recorder's (src/runner/record/). Exit codes: 0 stopped by a signal, 1 refused by the service or
// failed to start, 2 bad usage.

import { startRunner } from './index.js';
import { parseRunnerArgs, USAGE, UsageError } from './options.js';
import { recordCommand } from './record/command.js';

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'record') return recordCommand(argv.slice(1));
  let options;
  try {
    options = parseRunnerArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`otp-runner: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const log = (line: string) =>
    process.stderr.write(`[otp-runner ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  let runner;
  try {
    runner = await startRunner({ ...options, log });
  } catch (err) {
    log(`could not start: ${(err as Error).message}`);
    return 1;
  }
  log(`Chromium: ${runner.chromium.path} (${runner.chromium.source}); connecting to ${options.server}`);
  return new Promise<number>((resolve) => {
    const stop = (code: number) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      void runner.close().then(() => resolve(code));
    };
    const onSignal = () => stop(0);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    runner.on('fatal', () => stop(1));
  });
}
