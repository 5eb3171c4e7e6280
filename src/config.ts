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
  /** Bytes of finished runs' JSON kept in memory for GET /otp/runs/:id; 0 = none. */
  runViewCacheBytes: number;
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
  storage: StorageConfig;
  /** REST limits that are not per tier (the per-tier numbers live in src/tiers.ts). */
  limits: {
    /** The per-key rate limit, shared by every process through PostgreSQL; false turns it off. */
    rateLimit: boolean;
    /** How often a process sends the requests it counted in memory and learns the others' (see RateCounter). */
    rateLimitSyncMs: number;
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

export type StorageDriverName = 'fs' | 's3';

export interface S3Config {
  /** Omitted: the AWS endpoint of the region. */
  endpoint?: string;
  /** Endpoint written into presigned download links, when clients reach S3 by another address. */
  publicEndpoint?: string;
  region: string;
  bucket: string;
  /** Omitted: the SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

export interface StorageConfig {
  /** Driver of buckets created from now on; each asset row keeps the driver it was written with. */
  defaultDriver: StorageDriverName;
  /** Present when S3 is configured (S3_BUCKET set). */
  s3?: S3Config;
  /** Largest single upload (413 beyond it). */
  maxUploadBytes: number;
  /** Lifetime of signed download links. */
  signedUrlTtlSec: number;
  /** Base URL written into signed fs links; the request's own origin when absent. */
  publicUrl?: string;
}

type Env = Record<string, string | undefined>;

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function storageConfig(env: Env): StorageConfig {
  const s3: S3Config | undefined = env.S3_BUCKET
    ? {
        endpoint: url(env, 'S3_ENDPOINT'),
        publicEndpoint: url(env, 'S3_PUBLIC_ENDPOINT'),
        region: env.S3_REGION || 'us-east-1',
        bucket: env.S3_BUCKET,
        accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
        // S3-compatible servers (MinIO, Garage, s3rver) want path-style addresses.
        forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', Boolean(env.S3_ENDPOINT)),
      }
    : undefined;
  if (s3 && Boolean(s3.accessKeyId) !== Boolean(s3.secretAccessKey)) {
    throw new Error('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both or neither');
  }
  const driver = env.STORAGE_DRIVER || (s3 ? 's3' : 'fs');
  if (driver !== 'fs' && driver !== 's3') throw new Error(`STORAGE_DRIVER must be fs or s3, got "${driver}"`);
  if (driver === 's3' && !s3) throw new Error('STORAGE_DRIVER=s3 needs S3_BUCKET (and S3_ENDPOINT for a server other than AWS)');
  const maxUploadBytes = int(env, 'MAX_UPLOAD_BYTES', 1024 ** 3);
  if (maxUploadBytes < 1) throw new Error('MAX_UPLOAD_BYTES must be at least 1');
  return {
    defaultDriver: driver,
    s3,
    maxUploadBytes,
    signedUrlTtlSec: 900,
    publicUrl: url(env, 'PUBLIC_URL'),
  };
}

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

export type ConfigOverrides = Partial<Omit<Config, 'otp' | 'storage' | 'limits'>> & {
  otp?: Partial<Config['otp']>;
  storage?: Partial<Config['storage']>;
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
    keyCacheMs: int(env, 'KEY_CACHE_MS', 5_000),
    runViewCacheBytes: int(env, 'RUN_VIEW_CACHE_MB', 32) * 1024 * 1024,
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
    storage: storageConfig(env),
    limits: {
      rateLimit: env.RATE_LIMIT !== 'off',
      rateLimitSyncMs: int(env, 'RATE_LIMIT_SYNC_MS', 1_000),
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
    storage: { ...config.storage, ...overrides.storage },
    limits: { ...config.limits, ...overrides.limits },
  };
}
