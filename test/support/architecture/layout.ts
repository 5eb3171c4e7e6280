// The layout docs/architecture.md describes, as data the rules (rules.ts) check: the rooms and what
// each may import, the tables and the room that owns each, the files that may read process.env.
// Change this with that page: the page says what this checks.

/**
 * Room -> the rooms it may import besides itself and the kernel. `room:types` allows type-only
 * imports (`import type`, `export type`) of that room and nothing else.
 */
export const MAY_IMPORT: Record<string, string[]> = {
  kernel: [],
  machines: [],
  validation: [],
  db: [],
  auth: ['db'],
  rest: ['validation', 'db', 'auth'],
  'otp/protocol': ['machines', 'validation'],
  'otp/queue': [],
  'otp/store': ['machines', 'db', 'rest', 'assets', 'otp/protocol:types', 'otp/queue'],
  'otp/engine': ['machines', 'validation:types', 'otp/protocol', 'otp/store', 'otp/queue', 'auth', 'db:types'],
  'otp/runs': ['machines', 'validation', 'otp/store:types', 'otp/engine:types', 'otp/queue', 'auth:types', 'rest'],
  'otp/transport': ['otp/engine', 'otp/protocol', 'auth', 'machines'],
  'otp/http': ['otp/runs', 'otp/engine', 'otp/store', 'otp/protocol', 'rest', 'assets', 'machines', 'reports'],
  assets: ['rest', 'validation', 'db', 'auth', 'machines:types'],
  artifacts: [
    'rest',
    'validation',
    'db',
    'auth',
    'otp/protocol',
    'otp/engine:types',
    'otp/store:types',
    'machines',
    'reports',
  ],
  platform: ['rest', 'db', 'auth', 'api-keys'],
  'api-keys': ['rest', 'db', 'auth'],
  recorder: [],
  runner: ['otp/protocol', 'recorder'],
  extension: ['otp/protocol', 'recorder'],
  reports: ['machines'],
  cli: ['reports', 'otp/queue'],
  oauth: ['db', 'auth'],
  mcp: [
    'validation',
    'auth',
    'rest',
    'otp/runs',
    'otp/http',
    'otp/store:types',
    'otp/engine:types',
    'artifacts',
    'machines',
    'ai',
  ],
  'webhook-delivery': ['rest', 'validation', 'db', 'artifacts', 'otp/http', 'ai'],
  console: [
    'auth',
    'otp/queue',
    'rest',
    'db:types',
    'machines',
    'otp/protocol',
    'ai:types',
    'otp/runs:types',
    'otp/store:types',
    'otp/engine',
    'artifacts:types',
  ],
  observability: ['otp/engine:types', 'rest:types', 'db:types'],
  ai: ['db', 'rest', 'validation', 'auth', 'assets', 'machines', 'otp/protocol', 'otp/store:types'],
};

/** Files of src/ itself that make the kernel. */
export const KERNEL = new Set([
  'config.ts',
  'log.ts',
  'ids.ts',
  'errors.ts',
  'tiers.ts',
  'free-port.ts',
  'lifecycle.ts',
  'unavailable.ts',
]);
/** The composition root: may import every room but ROOT_NEVER_IMPORTS. */
export const ROOT_FILES = new Set(['service.ts', 'main.ts', 'doors.ts']);
/** Folders of src/ that are the composition root too (its builders, one per room or two). */
export const ROOT_DIRS = new Set(['composition']);
/**
 * The runner, the CLI and the browser extension are programs of their own: the service never imports
 * them, and they import no kernel.
 */
export const ROOT_NEVER_IMPORTS = new Set(['runner', 'cli', 'extension']);
export const NO_KERNEL = new Set(['runner', 'cli', 'extension']);

/** The packages machines/ may import (and nothing else outside machines/). */
export const MACHINE_PACKAGES = new Set(['xstate']);

/**
 * Every table a migration creates, and the one room whose code may name it (db/ aside, where the
 * migrations are). A table named elsewhere is reached through a port the owner implements.
 */
export const TABLE_OWNERS: Record<string, string> = {
  tenants: 'platform',
  projects: 'platform',
  project_groups: 'platform',
  api_keys: 'auth',
  idempotency_keys: 'rest',
  rate_limit_windows: 'rest',
  otp_runs: 'otp/store',
  otp_queue_pools: 'otp/store',
  otp_queue_owners: 'otp/store',
  otp_queue_groups: 'otp/store',
  otp_run_steps: 'otp/store',
  otp_run_step_attempts: 'otp/store',
  otp_sessions: 'otp/store',
  otp_recordings: 'otp/store',
  otp_recording_events: 'otp/store',
  service_instances: 'otp/store',
  asset_buckets: 'assets',
  assets: 'assets',
  asset_signing_keys: 'assets',
  artifacts: 'artifacts',
  artifact_links: 'artifacts',
  project_usage: 'artifacts',
  test_case_mappings: 'artifacts',
  readiness_snapshots: 'artifacts',
  project_settings: 'platform',
  // Dropped by 003_artifacts, which moved their rows into `artifacts`.
  test_cases: 'artifacts',
  test_plans: 'artifacts',
  oauth_models: 'oauth',
  oauth_signing_keys: 'oauth',
  oauth_revoked_tokens: 'oauth',
  oauth_secrets: 'oauth',
  webhook_events: 'webhook-delivery',
  webhook_deliveries: 'webhook-delivery',
  webhook_attempts: 'webhook-delivery',
  webhook_health: 'webhook-delivery',
  ai_failure_signatures: 'ai',
  ai_failures: 'ai',
  ai_case_outcomes: 'ai',
  ai_scan_progress: 'ai',
  ai_signature_bugs: 'ai',
  ai_triage_corrections: 'ai',
  ai_triage_rules: 'ai',
  ai_usage: 'ai',
  ai_quarantines: 'ai',
  ai_healing_proposals: 'ai',
};

/** The only readers of process.env: the service's configuration, the runner's options and the CLI's. */
export const ENV_READERS = new Set(['src/config.ts', 'src/runner/options.ts', 'src/cli/options.ts']);

/** The one module that makes Ajv instances (docs/decisions.md, "One Ajv configuration"). */
export const AJV_MAKER = 'src/validation/ajv.ts';

/** About 400 lines: a file a newcomer reads whole. */
export const MAX_LINES = 420;

/**
 * Import circles between files tolerated while they are being untangled (none are now): each is the
 * set of files of one circle. The test fails when one is gone, so that the entry goes with it.
 */
export const KNOWN_FILE_CIRCLES: string[][] = [];
