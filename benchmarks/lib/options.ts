// Command line of `npm run bench`: scenario names and --name=value settings. Every duration and size
// has a default for the full run and a tiny one for --smoke (the few-second run inside npm test).

export const SCENARIOS = [
  'steps',
  'scaling',
  'sessions',
  'latency',
  'rest',
  'runner',
  'extension',
  'history',
  'flaky',
  'queues',
  'queues-live',
  'connect-storm',
  'resume-storm',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  scenarios: ScenarioName[];
  /** Every scenario and no size or duration changed: only such a run replaces RESULTS.md. */
  full: boolean;
  smoke: boolean;
  /** Base PostgreSQL server for fresh databases; undefined = the service's embedded one. */
  databaseUrl?: string;
  write: boolean;
  resultsFile: string;
  json?: string;
  cpuProfDir?: string;
  /** Skip the baseline phases (for profiling and A/B runs of the engine; never a full run). */
  baselines: boolean;
  /** Measured window and warm-up of each phase, in seconds. */
  duration: number;
  warmup: number;
  /** Executor worker processes for the throughput and latency scenarios. */
  workers: number;
  steps: {
    executors: number;
    stepsPerRun: number /** stop after this many runs per executor instead of a timed window */;
    runsPerExecutor?: number;
  };
  /** Fleet sizes at which steps/s, latency and CPU per step are measured; `halfLoadAt`: the size also driven at half its maximum. */
  scaling: { fleets: number[]; halfLoadAt: number; stepsPerRun: number };
  sessions: { count: number; keepaliveSec: number; rounds: number };
  /** connect-storm, resume-storm: the fleet (capped by the open-file limit) and, resuming, how many have runs in flight. */
  storms: { sessions: number; busy: number; rounds: number };
  latency: { executors: number; maxParallel: number; stepsPerRun: number; stepDelayMs: number; workers: number };
  rest: { connections: number; stepsPerRun: number; rounds: number };
  /** The history the flaky scenario builds (runs of 5 test cases of 10 steps) and the requests it times. */
  flaky: { runs: number; requests: number };
  /** The queues scenario: runs queued for the claim's timing, claims timed, simulated hours of the rule. */
  queues: { queued: number; claims: number; hours: number };
  /** The queues-live scenario: the flood's runs, executor slots in all, the other tenant's executors. */
  queuesLive: { runs: number; slots: number; tenantExecutors: number };
  runner: {
    stepsPerRun: number;
    rounds: number;
    probeMax: number /** parallel runs at which bare and service are compared */;
    parallel: number[];
  };
}

const HELP = `Usage: npm run bench -- [scenario ...] [--option=value ...]

Scenarios: ${SCENARIOS.join(', ')} (all when none is named)

  --smoke                 a few-second run of every scenario with tiny sizes (used by npm test)
  --embedded              use the service's embedded PostgreSQL instead of DATABASE_URL
  --duration=S            measured seconds per phase (default 10)
  --warmup=S              warm-up seconds before each measured window (default 2)
  --workers=N             executor worker processes (default 2)
  --executors=N           steps: executors, each running runs one at a time (default 50)
  --steps-per-run=N       steps: steps per run (default 100)
  --fleets=N,N,...        scaling: fleet sizes (executors at maxParallel 1; default 10,50,200,1000)
  --sessions=N            sessions: sessions to hold (default 10000, capped by the open-file limit)
  --keepalive=S           sessions: OTP_KEEPALIVE_SEC of the service (default 5)
  --rounds=N              sessions: keepalive rounds to watch (default 3)
  --storm-sessions=N      connect-storm, resume-storm: the fleet (default 19000, capped by the open-file limit)
  --storm-busy=N          resume-storm: sessions with runs in flight (default 200)
  --storm-rounds=N        connect-storm: rounds of the service and of the bare transport, taken in turn (default 3)
  --latency-executors=N   latency: executors (default 100)
  --latency-parallel=N    latency: maxParallel of each (default 10)
  --latency-steps=N       latency: steps of the longest run; runs of 1/5 to 5/5 of it mix (default 100)
  --step-delay=MS         latency: time each simulated step takes on the executor (default 500)
  --latency-workers=N     latency: executor worker processes (default 4: fewer connections per
                          client loop, so that the client adds less to the figures)
  --rest-connections=N    rest: autocannon connections (default 50)
  --rest-rounds=N         rest: alternating rounds of Koa hello and GET; the median ratio counts (default 3)
  --flaky-runs=N          flaky: runs in the history it builds, 50 step results each (default 100000)
  --flaky-requests=N      flaky: requests timed per measure (default 300)
  --queue-runs=N          queues: runs queued when claims are timed (default 100000)
  --queue-claims=N        queues: claims timed, each order (default 300)
  --queue-hours=N         queues: simulated hours of the rule at the issue's scale (default 2)
  --live-runs=N           queues-live: runs the flood posts at once (default 10000)
  --live-slots=N          queues-live: executor slots over the three processes (default 200)
  --live-tenant=N         queues-live: the other tenant's executors (default 4)
  --runner-steps=N        runner, extension: steps of the browser flow (default 30)
  --runner-rounds=N       runner, extension: alternating rounds, bare and through the service (default 5)
  --runner-probe-max=N    runner: most parallel contexts the capacity probe tries (default 32)
  --cpu-prof=DIR          write a V8 CPU profile of each service process into DIR
  --no-baselines          measure the engine only (for profiling and A/B comparisons)
  --json=FILE             also write the rows as JSON
  --no-write              do not replace RESULTS.md even on a full run
`;

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions | 'help' {
  const flags = new Map<string, string>();
  const names: string[] = [];
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') return 'help';
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (match) flags.set(match[1]!, match[2] ?? 'true');
    else names.push(arg);
  }
  const known = new Set([
    'smoke',
    'embedded',
    'duration',
    'fleets',
    'warmup',
    'workers',
    'executors',
    'steps-per-run',
    'sessions',
    'keepalive',
    'rounds',
    'storm-sessions',
    'storm-busy',
    'storm-rounds',
    'latency-executors',
    'latency-parallel',
    'latency-steps',
    'step-delay',
    'latency-workers',
    'rest-connections',
    'rest-rounds',
    'runner-steps',
    'runner-rounds',
    'runner-probe-max',
    'cpu-prof',
    'json',
    'no-write',
    'flaky-runs',
    'flaky-requests',
    'queue-runs',
    'queue-claims',
    'queue-hours',
    'live-runs',
    'live-slots',
    'live-tenant',
    'no-baselines',
  ]);
  for (const name of flags.keys()) if (!known.has(name)) throw new Error(`unknown option --${name}\n\n${HELP}`);
  for (const name of names) {
    if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`unknown scenario "${name}"\n\n${HELP}`);
  }
  const num = (name: string, fallback: number): number => {
    const raw = flags.get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number, got "${raw}"`);
    return value;
  };
  const smoke = flags.has('smoke');
  const sizeFlags = [...flags.keys()].filter((f) => !['embedded', 'cpu-prof', 'json', 'no-write'].includes(f));
  const baselines = !flags.has('no-baselines');
  const scenarios = names.length ? ([...new Set(names)] as ScenarioName[]) : [...SCENARIOS];
  const full = scenarios.length === SCENARIOS.length && sizeFlags.length === 0;
  const embedded = flags.has('embedded') || !env.DATABASE_URL;
  return {
    scenarios,
    full,
    smoke,
    databaseUrl: embedded ? undefined : env.DATABASE_URL,
    write: full && !flags.has('no-write'),
    resultsFile: 'benchmarks/RESULTS.md',
    json: flags.get('json'),
    cpuProfDir: flags.get('cpu-prof'),
    baselines,
    // The smoke window must see a few runs end and new ones start even on a loaded machine (the latency
    // scenario's POST → run.start figure has no sample otherwise).
    duration: num('duration', smoke ? 2 : 10),
    warmup: num('warmup', smoke ? 0.2 : 2),
    workers: Math.max(1, num('workers', smoke ? 1 : 2)),
    steps: {
      executors: num('executors', smoke ? 2 : 50),
      stepsPerRun: num('steps-per-run', smoke ? 10 : 100),
      ...(smoke ? { runsPerExecutor: 1 } : {}),
    },
    scaling: { ...fleetSizes(flags.get('fleets'), smoke ? [2] : [10, 50, 200, 1000]), stepsPerRun: smoke ? 10 : 100 },
    sessions: {
      count: num('sessions', smoke ? 50 : 10_000),
      keepaliveSec: num('keepalive', smoke ? 1 : 5),
      rounds: num('rounds', smoke ? 1 : 3),
    },
    storms: {
      sessions: num('storm-sessions', smoke ? 20 : 19_000),
      busy: Math.max(1, num('storm-busy', smoke ? 2 : 200)),
      rounds: Math.max(1, num('storm-rounds', smoke ? 1 : 3)),
    },
    latency: {
      executors: num('latency-executors', smoke ? 4 : 100),
      maxParallel: num('latency-parallel', smoke ? 2 : 10),
      stepsPerRun: num('latency-steps', smoke ? 5 : 100),
      stepDelayMs: num('step-delay', smoke ? 20 : 500),
      workers: Math.max(1, num('latency-workers', smoke ? 1 : 4)),
    },
    rest: {
      connections: num('rest-connections', smoke ? 4 : 50),
      stepsPerRun: 10,
      rounds: Math.max(1, num('rest-rounds', smoke ? 1 : 3)),
    },
    queues: {
      queued: Math.max(100, num('queue-runs', smoke ? 1_000 : 100_000)),
      claims: Math.max(10, num('queue-claims', smoke ? 20 : 300)),
      hours: Math.max(0.1, num('queue-hours', smoke ? 0.2 : 2)),
    },
    queuesLive: {
      runs: Math.max(10, num('live-runs', smoke ? 400 : 10_000)),
      slots: Math.max(3, num('live-slots', smoke ? 12 : 200)),
      tenantExecutors: Math.max(1, num('live-tenant', smoke ? 2 : 4)),
    },
    flaky: {
      runs: Math.max(10, num('flaky-runs', smoke ? 500 : 100_000)),
      requests: Math.max(5, num('flaky-requests', smoke ? 10 : 300)),
    },
    runner: {
      stepsPerRun: Math.max(1, num('runner-steps', smoke ? 4 : 30)),
      rounds: Math.max(1, num('runner-rounds', smoke ? 1 : 5)),
      probeMax: Math.min(64, Math.max(1, num('runner-probe-max', smoke ? 1 : 32))),
      parallel: smoke ? [1, 2] : [1, 8],
    },
  };
}

/** --fleets=10,50,200: ascending sizes; the size driven again at half load is 200 when measured, else the largest. */
function fleetSizes(raw: string | undefined, fallback: number[]): { fleets: number[]; halfLoadAt: number } {
  const fleets = raw === undefined ? fallback : raw.split(',').map(Number);
  if (!fleets.length || fleets.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--fleets must be positive whole numbers separated by commas, got "${raw}"`);
  fleets.sort((a, b) => a - b);
  return { fleets, halfLoadAt: fleets.includes(200) ? 200 : fleets[fleets.length - 1]! };
}

export { HELP };
