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
  /** Its place in the queue (docs/queues.md): group, class, and whether it supersedes its group's earlier runs. */
  queue?: { group?: string; priority?: 'gate' | 'normal' | 'batch'; cancelInProgress?: true };
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
  --group NAME        its queue group (a pipeline, a branch): executors are shared fairly between
                      groups (docs/queues.md)         OTP_GROUP        the credential
  --priority CLASS    gate, normal or batch                            normal
  --cancel-in-progress  cancel the group's earlier queued runs (a newer push supersedes them)
  --junit FILE        write a JUnit XML report
  --ctrf FILE         write a CTRF JSON report
  --timeout SECONDS   give up waiting (exit 2)     OTP_TIMEOUT   1800
  --help
`;

const FLAGS = {
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
  group: { type: 'string' },
  priority: { type: 'string' },
  'cancel-in-progress': { type: 'boolean' },
  junit: { type: 'string' },
  ctrf: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean' },
} as const;

/** The flags as given; an unknown or malformed one is a UsageError. */
function readFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

type Flags = ReturnType<typeof readFlags>;

export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv, isTty: boolean): RunOptions | 'help' {
  const flags = readFlags(argv);
  if (flags.help) return 'help';
  const target = targetOf(flags);
  const auth = authOf(flags, env);
  const secretNames = flags.secret ?? [];
  const vars = varsOf(flags.var ?? [], secretNames, env);
  const retries = retriesOf(flags);
  const timeout = timeoutSecOf(flags, env);
  return {
    server: (flags.server ?? env.OTP_SERVER_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    auth,
    target,
    vars,
    secretNames,
    ...(flags.session ? { sessionId: flags.session } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...queueOf(flags, env),
    ...(flags.junit ? { junit: flags.junit } : {}),
    ...(flags.ctrf ? { ctrf: flags.ctrf } : {}),
    timeoutMs: timeout * 1000,
    // CI sets CI=true; a terminal that is not CI gets the live bar.
    tty: isTty && !env.CI,
  };
}

function targetOf(flags: Flags): RunOptions['target'] {
  const targets = [flags.case?.length, flags.plan, flags.label?.length].filter(Boolean).length;
  if (targets !== 1) throw new UsageError('give exactly one of --case, --plan or --label');
  if (flags.plan) return { planId: flags.plan };
  return flags.case?.length ? { testCaseIds: flags.case } : { labels: flags.label! };
}

function authOf(flags: Flags, env: NodeJS.ProcessEnv): RunOptions['auth'] {
  const key = flags.key ?? env.OTP_KEY;
  const clientId = flags['client-id'] ?? env.OTP_CLIENT_ID;
  const clientSecret = flags['client-secret'] ?? env.OTP_CLIENT_SECRET;
  if (key) return { key };
  if (clientId && clientSecret) return { clientId, clientSecret };
  throw new UsageError(
    'give an API key (--key or OTP_KEY) or OAuth client credentials (--client-id and --client-secret)',
  );
}

/** The `{{name}}` values: each --var NAME=VALUE, then each --secret NAME from the environment. */
function varsOf(pairs: string[], secretNames: string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--var takes NAME=VALUE, got "${pair}"`);
    vars[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  for (const name of secretNames) {
    const value = env[name];
    if (value === undefined) throw new UsageError(`--secret ${name}: the environment has no ${name}`);
    vars[name] = value;
  }
  return vars;
}

const PRIORITIES = ['gate', 'normal', 'batch'] as const;

/** `queue` when a flag (or OTP_GROUP) asks for one; none otherwise, as before queues. */
function queueOf(flags: Flags, env: NodeJS.ProcessEnv): Pick<RunOptions, 'queue'> {
  const group = flags.group ?? env.OTP_GROUP;
  const priority = PRIORITIES.find((p) => p === flags.priority);
  if (flags.priority !== undefined && !priority)
    throw new UsageError(`--priority takes gate, normal or batch, got "${flags.priority}"`);
  const queue = {
    ...(group ? { group } : {}),
    ...(priority ? { priority } : {}),
    ...(flags['cancel-in-progress'] ? { cancelInProgress: true as const } : {}),
  };
  return Object.keys(queue).length ? { queue } : {};
}

function retriesOf(flags: Flags): number | undefined {
  if (flags.retries === undefined) return undefined;
  const retries = Number(flags.retries);
  if (!(Number.isInteger(retries) && retries >= 0 && retries <= 3))
    throw new UsageError(`--retries takes 0 to 3, got "${flags.retries}"`);
  return retries;
}

function timeoutSecOf(flags: Flags, env: NodeJS.ProcessEnv): number {
  const timeout = Number(flags.timeout ?? env.OTP_TIMEOUT ?? 1800);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new UsageError(`--timeout takes seconds, got "${flags.timeout ?? env.OTP_TIMEOUT}"`);
  return timeout;
}
