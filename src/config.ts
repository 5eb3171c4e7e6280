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
  /** How long an API key's principal is kept after use (revocation invalidates at once); 0 = never kept. */
  keyCacheMs: number;
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
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export type ConfigOverrides = Partial<Omit<Config, 'otp'>> & { otp?: Partial<Config['otp']> };

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
    keyCacheMs: int(env, 'KEY_CACHE_MS', 5_000),
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
  };
  return { ...config, ...overrides, otp: { ...config.otp, ...overrides.otp } };
}
