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
  /**
   * The address clients reach the REST listener by (PUBLIC_URL, no trailing slash), e.g. behind a
   * proxy. The OAuth issuer is `${publicUrl}/oauth`, the audience of access tokens `${publicUrl}/`,
   * and executors are told it in welcome.apiUrl; absent, all derive from the bound listener.
   */
  publicUrl?: string;
  /**
   * The OTP WebSocket address clients reach (OTP_PUBLIC_URL, ws:// or wss://, path included), e.g.
   * behind a proxy; GET /otp/protocol answers it as otpUrl. Absent: ws://{the request's host}:{WS_PORT}/otp.
   */
  otpPublicUrl?: string;
  /**
   * The built browser extension the console serves (EXTENSION_ZIP, a path); absent: dist/extension.zip
   * of the checkout, as `npm run build:extension` writes it.
   */
  extensionZip?: string;
  oauth: {
    /** Lifetime of JWT access tokens. */
    accessTokenTtlSec: number;
    /** Lifetime of refresh tokens. */
    refreshTokenTtlSec: number;
    /** How often a process looks for a signing key rotated by another one. */
    keysRefreshMs: number;
  };
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
    /** How often the run machines' traces of running runs are written (and other processes' consoles hear of them); 0 = only at the end. */
    traceFlushMs: number;
    /** How long a session whose socket dropped waits to be resumed before its runs end as error; 0: no resume. */
    resumeWindowMs: number;
    /** How long a run's write may wait for an unavailable database before the run ends. */
    outageWindowMs: number;
    /** What a hello refused during a database outage is told to wait. */
    helloRetryMs: number;
    /** What carries OTP frames (OTP_TRANSPORT): uWebSockets.js where it loads (auto), or forced. */
    transport: 'auto' | 'uws' | 'ws';
    /** The order claims take queued runs (OTP_QUEUE): the queue rule (fair, docs/queues.md) or first come, first served (fifo). */
    queue: 'fair' | 'fifo';
  };
  /** On SIGTERM: how long runs in flight may go on before their executors are told to reconnect elsewhere. */
  drainMs: number;
  /** How often this process proves it is alive, and when another is declared dead. */
  heartbeatMs: number;
  instanceTimeoutMs: number;
  /** How often runs left `running` with no live driver are looked for and finished `error` (0: never). */
  orphanCheckMs: number;
  /** The metrics listener (/metrics, /healthz, /readyz); none when the port is not set (0: any free port). */
  metricsPort?: number;
  metricsHost: string;
  /** REST requests slower than this are logged at info. */
  slowRequestMs: number;
  logLevel: 'silent' | 'info' | 'debug';
  storage: StorageConfig;
  webhooks: WebhookConfig;
  ai: AiConfig;
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
    /** When set, replaces every tier's monthly allowance of AI calls (AI_CALLS_PER_MONTH). */
    aiCallsPerMonth?: number;
    /** How long an Idempotency-Key is remembered. */
    idempotencyTtlSec: number;
    /** A first request still unanswered after this long is taken as abandoned; a retry runs again. */
    idempotencyStaleSec: number;
    /** The largest report POST /tests/runs/:id/results/import reads (IMPORT_MAX_BYTES; 50 MiB). */
    importMaxBytes: number;
  };
}

/** The ai/* group (docs/ai.md): the optional language model and the quarantine's term. */
export interface AiConfig {
  /** An OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, ...); none: the model-backed routes answer 503. */
  model?: { baseUrl: string; apiKey: string; model: string; timeoutMs: number };
  /** How long a quarantine lasts unless renewed. */
  quarantineDays: number;
}

/** Webhook delivery (docs/webhooks.md). */
export interface WebhookConfig {
  /** Webhook urls may name private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateTargets: boolean;
  /** This process delivers (every process does unless told not to). */
  deliver: boolean;
  /** One attempt's limit, connection to answer (WEBHOOK_TIMEOUT_MS). */
  attemptTimeoutMs: number;
  /** Waits before each retry (the first entry after the first failure); attempts = length + 1. Jittered by ±jitter. */
  retryScheduleMs: number[];
  /** Each wait is multiplied by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** How often a dispatcher looks for due deliveries when no notice woke it (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** Attempts in flight per process. */
  concurrency: number;
  /** A webhook is disabled after this many failed attempts in a row... */
  disableAfterFailures: number;
  /** ...spanning at least this long without a success (WEBHOOK_DISABLE_AFTER_HOURS). */
  disableAfterMs: number;
  /** How long the previous secret keeps signing after a rotation, unless the request says. */
  secretGraceMs: number;
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

function url(env: Env, name: string, schemes = ['http:', 'https:']): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try {
    const parsed = new URL(raw);
    if (!schemes.includes(parsed.protocol)) throw new Error();
  } catch {
    const kinds = schemes.map((s) => s.slice(0, -1)).join(' or ');
    throw new Error(`${name} must be a URL of scheme ${kinds}, got "${raw}"`);
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
  if (driver === 's3' && !s3)
    throw new Error('STORAGE_DRIVER=s3 needs S3_BUCKET (and S3_ENDPOINT for a server other than AWS)');
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

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function optionalInt(env: Env, name: string): number | undefined {
  return env[name] === undefined || env[name] === '' ? undefined : int(env, name, 0);
}

/** A list of seconds (`5,30,120`) as milliseconds. */
function secondsList(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback.map((s) => s * 1000);
  const values = raw.split(',').map((v) => Number(v.trim()));
  if (!values.length || values.some((v) => !Number.isFinite(v) || v < 0))
    throw new Error(`${name} must be a comma-separated list of seconds, got "${raw}"`);
  return values.map((s) => Math.round(s * 1000));
}

// About 28 hours of retries, roughly doubling: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h.
const RETRY_SCHEDULE_SEC = [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800, 43200];

function webhookConfig(env: Env): WebhookConfig {
  return {
    allowPrivateTargets: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    deliver: bool(env, 'WEBHOOK_DELIVER', true),
    attemptTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    retryScheduleMs: secondsList(env, 'WEBHOOK_RETRY_SCHEDULE', RETRY_SCHEDULE_SEC),
    jitter: 0.2,
    pollMs: int(env, 'WEBHOOK_POLL_MS', 5_000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 8) || 1,
    disableAfterFailures: int(env, 'WEBHOOK_DISABLE_AFTER_FAILURES', 10),
    disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_HOURS', 24) * 3600_000,
    secretGraceMs: 24 * 3600_000,
  };
}

function aiConfig(env: Env): AiConfig {
  const baseUrl = url(env, 'AI_BASE_URL');
  const model = env.AI_MODEL || undefined;
  if (Boolean(baseUrl) !== Boolean(model)) throw new Error('AI_BASE_URL and AI_MODEL are set together (or neither)');
  return {
    // A local server (Ollama, vLLM) takes any key; the client library needs one to be given.
    ...(baseUrl && model
      ? { model: { baseUrl, apiKey: env.AI_API_KEY || 'none', model, timeoutMs: int(env, 'AI_TIMEOUT_MS', 60_000) } }
      : {}),
    quarantineDays: int(env, 'AI_QUARANTINE_DAYS', 14),
  };
}

export type ConfigOverrides = Partial<Omit<Config, 'otp' | 'storage' | 'limits' | 'oauth' | 'webhooks'>> & {
  oauth?: Partial<Config['oauth']>;
  webhooks?: Partial<Config['webhooks']>;
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
    publicUrl: url(env, 'PUBLIC_URL'),
    otpPublicUrl: url(env, 'OTP_PUBLIC_URL', ['ws:', 'wss:']),
    extensionZip: env.EXTENSION_ZIP ? path.resolve(env.EXTENSION_ZIP) : undefined,
    oauth: {
      accessTokenTtlSec: int(env, 'OAUTH_ACCESS_TOKEN_TTL_SEC', 3600),
      refreshTokenTtlSec: int(env, 'OAUTH_REFRESH_TOKEN_TTL_SEC', 14 * 24 * 3600),
      keysRefreshMs: int(env, 'OAUTH_KEYS_REFRESH_MS', 5_000),
    },
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
      traceFlushMs: int(env, 'OTP_TRACE_FLUSH_MS', 1_000),
      resumeWindowMs: int(env, 'OTP_RESUME_WINDOW_MS', 30_000),
      // How long a run's write waits for an unavailable database before the run ends (E_DATABASE_UNAVAILABLE).
      outageWindowMs: int(env, 'OTP_OUTAGE_WINDOW_MS', 60_000),
      // What a hello refused during a database outage is told to wait before it says hello again.
      helloRetryMs: int(env, 'OTP_HELLO_RETRY_MS', 2_000),
      transport: oneOf(env, 'OTP_TRANSPORT', ['auto', 'uws', 'ws'] as const, 'auto'),
      queue: oneOf(env, 'OTP_QUEUE', ['fair', 'fifo'] as const, 'fair'),
    },
    drainMs: int(env, 'OTP_DRAIN_MS', 30_000),
    heartbeatMs: int(env, 'HEARTBEAT_MS', 5_000),
    instanceTimeoutMs: int(env, 'INSTANCE_TIMEOUT_MS', 30_000),
    orphanCheckMs: int(env, 'ORPHAN_CHECK_MS', 30_000),
    metricsPort: optionalInt(env, 'METRICS_PORT'),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    slowRequestMs: int(env, 'SLOW_REQUEST_MS', 1_000),
    logLevel,
    storage: storageConfig(env),
    webhooks: webhookConfig(env),
    ai: aiConfig(env),
    limits: {
      rateLimit: env.RATE_LIMIT !== 'off',
      rateLimitSyncMs: int(env, 'RATE_LIMIT_SYNC_MS', 1_000),
      requestsPerMinute: optionalInt(env, 'RATE_LIMIT_PER_MINUTE'),
      artifacts: optionalInt(env, 'ARTIFACT_QUOTA'),
      aiCallsPerMonth: optionalInt(env, 'AI_CALLS_PER_MONTH'),
      idempotencyTtlSec: int(env, 'IDEMPOTENCY_TTL_SEC', 24 * 3600),
      idempotencyStaleSec: 60,
      importMaxBytes: int(env, 'IMPORT_MAX_BYTES', 50 * 1024 * 1024),
    },
  };
  return {
    ...config,
    ...overrides,
    otp: { ...config.otp, ...overrides.otp },
    storage: { ...config.storage, ...overrides.storage },
    limits: { ...config.limits, ...overrides.limits },
    oauth: { ...config.oauth, ...overrides.oauth },
    webhooks: { ...config.webhooks, ...overrides.webhooks },
  };
}
