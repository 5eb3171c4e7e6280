// `otp run`'s options: flags, then the environment, then defaults. The CLI is a program of its own,
// like otp-runner, so this file is its one reader of process.env (test/architecture.spec.ts allows it).
import { parseArgs } from 'node:util';

export interface RunOptions {
  /** The service's HTTP address (REST under {server}/api/v1). */
  server: string;
  /** An API key of scope write, or OAuth client credentials for one. */
  auth: { key: string } | { clientId: string; clientSecret: string };
  /** What to run: test cases, a plan, or the test cases carrying every one of these labels. */
  target: { testCaseIds: string[] } | { planId: string } | { labels: string[] };
  /** `{{name}}` values: plain ones from --var, secret ones read from the environment (--secret). */
  vars: Record<string, string>;
  /** The names whose values came from the environment: never printed. */
  secretNames: string[];
  sessionId?: string;
  /** How many times a failed test case runs again (0-3; absent: the plan's default, else 0). */
  retries?: number;
  junit?: string;
  ctrf?: string;
  timeoutMs: number;
  /** A live bar (a terminal) or plain lines (CI logs). */
  tty: boolean;
}

export class UsageError extends Error {}

/** The environment `otp run` reads its defaults from (this file is the CLI's one reader of it). */
export function environment(): NodeJS.ProcessEnv {
  return process.env;
}

export const USAGE = `Usage: otp run (--case ID... | --plan ID | --label NAME...) [options]

Starts a run on the service, prints each test case's outcome as it ends, and exits with the
verdict: 0 passed, 1 failed (a step failed, errored or the run was cancelled), 2 could not run
(refused, no executor took it in time, the service unreachable). See docs/ci.md.

What to run (one of):
  --case ID           a test case (repeat for several, run in that order)
  --plan ID           a test plan
  --label NAME        every test case with this label (repeat: cases with all of them)

Options (flag, then environment, then default):
  --server URL        the service's address          OTP_SERVER_URL   http://127.0.0.1:8080
  --key KEY           API key of scope write         OTP_KEY
  --client-id ID      OAuth client (credentials)     OTP_CLIENT_ID
  --client-secret S   its secret                     OTP_CLIENT_SECRET
  --var NAME=VALUE    a {{NAME}} value (repeat)
  --secret NAME       a {{NAME}} value taken from the environment variable NAME, never printed (repeat)
  --session ID        run on this executor session
  --retries N         run a failed test case again, up to N (0-3) times; one that then passes is flaky
                      and does not fail the build (default: the plan's retries, else 0)
  --junit FILE        write a JUnit XML report
  --ctrf FILE         write a CTRF JSON report
  --timeout SECONDS   give up waiting (exit 2)     OTP_TIMEOUT   1800
  --help
`;

export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv, isTty: boolean): RunOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        case: { type: 'string', multiple: true },
        plan: { type: 'string' },
        label: { type: 'string', multiple: true },
        server: { type: 'string' },
        key: { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        var: { type: 'string', multiple: true },
        secret: { type: 'string', multiple: true },
        session: { type: 'string' },
        retries: { type: 'string' },
        junit: { type: 'string' },
        ctrf: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.help) return 'help';
  const targets = [parsed.case?.length, parsed.plan, parsed.label?.length].filter(Boolean).length;
  if (targets !== 1) throw new UsageError('give exactly one of --case, --plan or --label');
  const target = parsed.plan
    ? { planId: parsed.plan }
    : parsed.case?.length
      ? { testCaseIds: parsed.case }
      : { labels: parsed.label! };

  const key = parsed.key ?? env.OTP_KEY;
  const clientId = parsed['client-id'] ?? env.OTP_CLIENT_ID;
  const clientSecret = parsed['client-secret'] ?? env.OTP_CLIENT_SECRET;
  let auth: RunOptions['auth'];
  if (key) auth = { key };
  else if (clientId && clientSecret) auth = { clientId, clientSecret };
  else
    throw new UsageError(
      'give an API key (--key or OTP_KEY) or OAuth client credentials (--client-id and --client-secret)',
    );

  const vars: Record<string, string> = {};
  for (const pair of parsed.var ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--var takes NAME=VALUE, got "${pair}"`);
    vars[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const secretNames = parsed.secret ?? [];
  for (const name of secretNames) {
    const value = env[name];
    if (value === undefined) throw new UsageError(`--secret ${name}: the environment has no ${name}`);
    vars[name] = value;
  }
  const retries = parsed.retries === undefined ? undefined : Number(parsed.retries);
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0 && retries <= 3))
    throw new UsageError(`--retries takes 0 to 3, got "${parsed.retries}"`);
  const timeout = Number(parsed.timeout ?? env.OTP_TIMEOUT ?? 1800);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new UsageError(`--timeout takes seconds, got "${parsed.timeout ?? env.OTP_TIMEOUT}"`);
  return {
    server: (parsed.server ?? env.OTP_SERVER_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    auth,
    target,
    vars,
    secretNames,
    ...(parsed.session ? { sessionId: parsed.session } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...(parsed.junit ? { junit: parsed.junit } : {}),
    ...(parsed.ctrf ? { ctrf: parsed.ctrf } : {}),
    timeoutMs: timeout * 1000,
    // CI sets CI=true; a terminal that is not CI gets the live bar.
    tty: isTty && !env.CI,
  };
}
