// `otp` (bin/otp.mjs): the service's command line for CI pipelines. One command today, `otp run`.

import { environment } from './options.js';
import { runCommand } from './run-command.js';

export const USAGE = `Usage: otp run ...      start a run and wait for its verdict (otp run --help)\n`;

export async function main(argv: string[]): Promise<number> {
  if (argv[0] !== 'run') {
    process.stderr.write(argv[0] && argv[0] !== '--help' ? `otp: unknown command "${argv[0]}"\n\n${USAGE}` : USAGE);
    return argv[0] === '--help' ? 0 : 2;
  }
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  process.once('SIGINT', () => interrupt());
  process.once('SIGTERM', () => interrupt());
  return runCommand(argv.slice(1), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: environment(),
    isTty: Boolean(process.stdout.isTTY),
    interrupted,
  });
}
