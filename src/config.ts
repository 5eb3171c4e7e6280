// The only module that reads process.env. Everything else receives a Config.
import path from 'node:path';

export interface Config {
  /** REST listener. */
  port: number;
  /** OTP WebSocket listener. */
  wsPort: number;
  host: string;
  dataDir: string;
  /** External PostgreSQL; when absent an embedded server is started under dataDir. */
  databaseUrl?: string;
  /** Port of the embedded PostgreSQL; 0 picks a free one. */
  embeddedPgPort: number;
  bootstrapKey?: string;
  otp: {
    keepaliveSec: number;
    pongTimeoutMs: number;
    helloTimeoutMs: number;
    stepTimeoutMs: number;
    stepGraceMs: number;
    maxSteps: number;
    maxFrameBytes: number;
    maxInvalidFrames: number;
    defaultMaxParallel: number;
  };
  /** How often this process proves it is alive, and when another is declared dead. */
  heartbeatMs: number;
  instanceTimeoutMs: number;
  logLevel: 'silent' | 'info' | 'debug';
  /** REST limits that are not per tier (the per-tier numbers live in src/tiers.ts). */
  limits: {
    /** The per-key rate limit is counted in PostgreSQL (shared by every process); false turns it off. */
    rateLimit: boolean;
    /** When set, replaces every tier's requests per minute (installs without tiers, tests). */
    requestsPerMinute?: number;
    /** When set, replaces every tier's artifact quota. */
    artifacts?: number;
    /** How long an Idempotency-Key is remembered. */
    idempotencyTtlSec: number;
    /** A first request still unanswered after this long is taken as abandoned; a retry runs again. */
    idempotencyStaleSec: number;
  };
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function optionalInt(env: Env, name: string): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : int(env, name, 0);
}

export type ConfigOverrides = Partial<Omit<Config, 'otp' | 'limits'>> & {
  otp?: Partial<Config['otp']>;
  limits?: Partial<Config['limits']>;
};

export function loadConfig(env: Env = process.env, overrides: ConfigOverrides = {}): Config {
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (logLevel !== 'silent' && logLevel !== 'info' && logLevel !== 'debug') {
    throw new Error(`LOG_LEVEL must be silent, info or debug, got "${logLevel}"`);
  }
  const config: Config = {
    port: int(env, 'PORT', 8080),
    wsPort: int(env, 'WS_PORT', 8081),
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    embeddedPgPort: int(env, 'EMBEDDED_PG_PORT', 0),
    bootstrapKey: env.SVC_BOOTSTRAP_KEY || undefined,
    otp: {
      keepaliveSec: int(env, 'OTP_KEEPALIVE_SEC', 25),
      pongTimeoutMs: int(env, 'OTP_PONG_TIMEOUT_MS', 10_000),
      helloTimeoutMs: int(env, 'OTP_HELLO_TIMEOUT_MS', 10_000),
      stepTimeoutMs: 30_000,
      stepGraceMs: int(env, 'OTP_STEP_GRACE_MS', 2_000),
      maxSteps: 500,
      maxFrameBytes: 1024 * 1024,
      maxInvalidFrames: 3,
      defaultMaxParallel: 1,
    },
    heartbeatMs: int(env, 'HEARTBEAT_MS', 5_000),
    instanceTimeoutMs: int(env, 'INSTANCE_TIMEOUT_MS', 30_000),
    logLevel,
    limits: {
      rateLimit: env.RATE_LIMIT !== 'off',
      requestsPerMinute: optionalInt(env, 'RATE_LIMIT_PER_MINUTE'),
      artifacts: optionalInt(env, 'ARTIFACT_QUOTA'),
      idempotencyTtlSec: int(env, 'IDEMPOTENCY_TTL_SEC', 24 * 3600),
      idempotencyStaleSec: 60,
    },
  };
  return {
    ...config,
    ...overrides,
    otp: { ...config.otp, ...overrides.otp },
    limits: { ...config.limits, ...overrides.limits },
  };
}
