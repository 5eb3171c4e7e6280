// The runner's options: command-line flags, then the environment (OTP_SERVER, OTP_KEY, ...), then
// defaults. The runner is its own program, so this file is its one reader of process.env (the
// service's is src/config.ts; test/architecture.spec.ts allows exactly these two).
import { parseArgs } from 'node:util';

export interface RunnerOptions {
  /** WebSocket address of the service, e.g. ws://127.0.0.1:8081/otp. */
  server: string;
  /** API key of scope write: the session's credentials, and the REST calls' (evidence, assets). */
  key: string;
  /** Browser contexts at once (declared as capabilities.maxParallel). */
  maxParallel: number;
  /** Declare eval: true and run eval steps; without it they are refused (E_CAPABILITY). */
  allowEval: boolean;
  /** Chromium or Chrome executable; found on the system or taken from @sparticuz/chromium when absent. */
  chromium?: string;
  /** Executor name in hello. */
  name?: string;
  /** Project id in hello (must be the key's project). */
  project?: string;
  /** HTTP base address of the service (REST under {api}/api/v1); learnt from welcome.apiUrl when absent. */
  api?: string;
  /** Show the browser window. */
  headed: boolean;
  /** Progress lines (the CLI writes them to stderr); silent when absent. */
  log?: (line: string) => void;
}

export const USAGE = `Usage: otp-runner [options]
       otp-runner record [options]      (record user actions; otp-runner record --help)

The reference OTP executor: connects to the service, performs each step in Chromium
(playwright-core) and reports its result. See docs/runner.md.

Options (flag, then environment, then default):
  --server URL        OTP WebSocket address        OTP_SERVER   ws://127.0.0.1:8081/otp
  --key KEY           API key of scope write       OTP_KEY      (required)
  --max-parallel N    browser contexts at once     OTP_MAX_PARALLEL  1
  --allow-eval        run eval steps               OTP_ALLOW_EVAL=1  off
  --chromium PATH     browser executable           OTP_CHROMIUM  /usr/bin/chromium, a Chrome found
                                                   on the system, else @sparticuz/chromium's
  --name NAME         executor name in hello       OTP_NAME     otp-runner@<host>
  --project ID        project id in hello          OTP_PROJECT  (the key's)
  --api URL           service HTTP base address    OTP_API      (told by the service in welcome)
  --headed            show the browser window      OTP_HEADED=1 off
  -h, --help          this text
`;

type Env = Record<string, string | undefined>;

export class UsageError extends Error {}

function flag(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes)$/i.test(value);
}

function positiveInt(raw: string, name: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new UsageError(`${name} must be an integer from 1 to 64, got "${raw}"`);
  return n;
}

/** Parses argv (without node and the script) and the environment; 'help' when help was asked. */
export function parseRunnerArgs(argv: string[], env: Env = process.env): RunnerOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        server: { type: 'string' },
        key: { type: 'string' },
        'max-parallel': { type: 'string' },
        'allow-eval': { type: 'boolean' },
        chromium: { type: 'string' },
        name: { type: 'string' },
        project: { type: 'string' },
        api: { type: 'string' },
        headed: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const key = v.key ?? env.OTP_KEY;
  if (!key) throw new UsageError('an API key is required: --key KEY or OTP_KEY');
  const server = v.server ?? env.OTP_SERVER ?? 'ws://127.0.0.1:8081/otp';
  if (!/^wss?:\/\//.test(server)) throw new UsageError(`--server must be a ws:// or wss:// address, got "${server}"`);
  const api = v.api ?? env.OTP_API;
  if (api !== undefined && !/^https?:\/\//.test(api))
    throw new UsageError(`--api must be an http(s) address, got "${api}"`);
  const maxParallelRaw = v['max-parallel'] ?? env.OTP_MAX_PARALLEL;
  return {
    server,
    key,
    maxParallel: maxParallelRaw === undefined ? 1 : positiveInt(maxParallelRaw, '--max-parallel'),
    allowEval: v['allow-eval'] ?? flag(env.OTP_ALLOW_EVAL),
    chromium: v.chromium ?? env.OTP_CHROMIUM,
    name: v.name ?? env.OTP_NAME,
    project: v.project ?? env.OTP_PROJECT,
    api,
    headed: v.headed ?? flag(env.OTP_HEADED),
  };
}

/** Whether a display is at hand for a headed browser (the recorder opens one when it is). */
export function hasDisplay(env: Env = process.env): boolean {
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY) || process.platform === 'darwin' || process.platform === 'win32';
}

/** What `otp-runner record` takes from the environment (its flags win); the server as the runner's. */
export function recorderEnvironment(env: Env = process.env): { server: string; key?: string; hasDisplay: boolean } {
  return {
    server: env.OTP_SERVER || 'ws://127.0.0.1:8081/otp',
    key: env.OTP_KEY || undefined,
    hasDisplay: hasDisplay(env),
  };
}
