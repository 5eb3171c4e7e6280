// REST as the service serves it: every room's routes on one Api, the Koa app (credentials, the rate
// limit, idempotency, health, the OAuth server, MCP and the console mounted on it) and its listener.
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HistoryAnswers } from '../ai/history-answers.js';
import type { Ai } from '../ai/index.js';
import { apiKeyRoutes } from '../api-keys/routes.js';
import type { Config } from '../config.js';
import type { Console } from '../console/server.js';
import { mcpBackendOf } from '../doors.js';
import { mcpOpenApiPaths } from '../mcp/openapi-paths.js';
import { mcpMiddleware } from '../mcp/server.js';
import { oauthOpenApiPaths } from '../oauth/openapi-paths.js';
import type { ServiceMetrics } from '../observability/metrics.js';
import type { OtpEngine } from '../otp/engine/engine.js';
import { recordingRoutes } from '../otp/http/recording-routes.js';
import { otpRoutes } from '../otp/http/routes.js';
import type { RunCommands } from '../otp/runs/commands.js';
import type { RunViews } from '../otp/store/run-views.js';
import { platformRoutes } from '../platform/routes.js';
import { createRestApp } from '../rest/app.js';
import type { Health } from '../rest/health.js';
import { IdempotencyStore } from '../rest/idempotency.js';
import { RateCounter } from '../rest/middleware/rate-limit.js';
import { answerClientError } from '../rest/middleware/storable-text.js';
import { Api } from '../rest/route.js';
import { effectiveLimits } from '../tiers.js';
import { type WebhookDelivery, webhookOperations } from '../webhook-delivery/index.js';
import type { Holdings } from './artifacts.js';
import type { Credentials } from './auth.js';
import type { Database } from './database.js';
import type { Teardown } from './teardown.js';

const API_DESCRIPTION = [
  'REST API of the service: software-project artifacts (bugs, tickets, requirements, specifications, tests, releases, knowledge), OTP test runs and assets. Paths carry /api/v1.',
  '',
  "- Authentication: `Authorization: Bearer <API key>`; a key belongs to one tenant and project and has the scope read, write or admin. Another project's id is a 404. An OAuth 2.1 access token (a JWT from /oauth/token) works wherever a key does, as the key that vouched for it.",
  '- Agents: MCP over Streamable HTTP at /mcp (tools svc_otp_run, svc_otp_status, ...), with an API key or an access token; OAuth discovery at /.well-known/oauth-protected-resource/mcp.',
  '- Errors: every non-2xx answer is `{ "error": { "code", "message", "details" } }`; VALIDATION_ERROR lists each failing field in details.fields.',
  '- Lists: `{ items, nextCursor }`, paged by `limit` and `cursor`, in a stable order (`sort`), with filters on the fields people filter by and `updatedSince`.',
  '- Records carry `version`; reads answer it as ETag, and a write with If-Match applies only to that revision (412 otherwise).',
  '- POST accepts Idempotency-Key: a retry gets the first answer, never a second record.',
  '- Limits: requests per minute per API key (429 RATE_LIMITED with Retry-After and RateLimit headers), artifacts per project by tier (402 QUOTA_EXCEEDED with upgradeUrl).',
  '- OTP executors connect over WebSocket at {ws_url}/otp; see GET /api/v1/otp/protocol.',
].join('\n');

export interface ApiParts {
  auth: Credentials;
  engine: OtpEngine;
  runs: RunCommands;
  views: RunViews;
  holdings: Holdings;
  webhooks: WebhookDelivery;
  ai: Ai;
  aiHistory: HistoryAnswers;
  /** The bound OTP WebSocket port (0 until bound), for GET /otp/protocol's otpUrl. */
  otpPort(): number;
}

/** Every room's routes. A project archived or deleted closes its sessions; a revoked key, its own. */
export function restApi(config: Config, database: Database, parts: ApiParts): Api {
  const { db, notifier } = database;
  const { auth, engine, holdings, aiHistory } = parts;
  const revokeKey = (keyId: string) => {
    auth.keys.invalidate(keyId);
    return engine.revokeKey(keyId);
  };
  const projectChanged = async (projectId: string, status: string) => {
    auth.keys.invalidateProject(projectId);
    await notifier.notify({ kind: 'project', projectId });
    if (status !== 'active') await engine.closeProject(projectId, `project ${status}`);
  };
  const { artifacts, assets, projectSettings: settings } = holdings;
  const { artifactCount } = artifacts;
  return new Api(aiHistory.meter).add(
    ...platformRoutes({ db, config, projectChanged, artifactCount, storageBytes: assets.storageBytes, settings }),
    ...apiKeyRoutes({ db, onRevoked: revokeKey }),
    ...otpRoutes({ runs: parts.runs, config, views: parts.views, otpPort: parts.otpPort }),
    ...recordingRoutes({ recordings: engine.recordings }),
    ...assets.routes,
    ...artifacts.routes,
    ...parts.webhooks.routes,
    ...parts.ai.routes,
    ...parts.aiHistory.routes,
  );
}

export interface RestParts extends ApiParts {
  api: Api;
  health: Health;
  metrics: ServiceMetrics;
  webConsole: Console;
  baseUrl(): string;
}

export interface RestListener {
  port: number;
  /** The per-key rate limit's counter (absent when the limit is off). */
  rateCounter?: RateCounter;
}

export async function listenForRest(
  config: Config,
  database: Database,
  parts: RestParts,
  teardown: Teardown,
): Promise<RestListener> {
  const { countersDb, quietLog: log } = database;
  const rateCounter = config.limits.rateLimit ? new RateCounter(countersDb, config.limits.rateLimitSyncMs) : undefined;
  if (rateCounter)
    teardown.add('rate-limit counts', () =>
      rateCounter.close().catch((err) => log.error('last rate-limit sync failed', { err })),
    );
  const rest = http.createServer((await restApp(config, database, parts, rateCounter)).callback());
  rest.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    rest.once('error', reject);
    rest.listen(config.port, config.host, () => resolve());
  });
  teardown.add(
    'REST listener',
    () =>
      new Promise<void>((resolve) => {
        rest.close(() => resolve());
        rest.closeAllConnections();
      }),
  );
  return { port: (rest.address() as AddressInfo).port, rateCounter };
}

async function restApp(config: Config, database: Database, parts: RestParts, rateCounter?: RateCounter) {
  const { auth, baseUrl } = parts;
  // MCP tools call what the REST routes call: the run commands, the run views and the artifact stores.
  const { runs, views, holdings, ai, aiHistory } = parts;
  const mcpBackend = mcpBackendOf(
    { runs, views, artifacts: holdings.artifacts, ai, aiHistory },
    (path) => `${baseUrl()}${path}`,
  );
  const { idempotencyTtlSec: ttlSec, idempotencyStaleSec: staleSec } = config.limits;
  return createRestApp({
    api: parts.api,
    // Keys of an archived project still read over REST; OTP sessions need an active project.
    authenticate: (credential) => auth.principals.resolve(credential),
    // An outage's 503s are the database's health to speak of (one line as it begins and ends).
    log: database.quietLog,
    rateLimit: rateCounter && {
      counter: rateCounter,
      limitFor: (principal) => effectiveLimits(principal.tier, config.limits).requestsPerMinute,
    },
    idempotency: new IdempotencyStore(database.db, { ttlSec, staleSec }),
    health: parts.health,
    slowRequestMs: config.slowRequestMs,
    observe: (sample) => parts.metrics.request(sample),
    // The page README's first run drives with otp-runner (docs/demo/index.html).
    staticPages: { '/demo': await fs.readFile(new URL('../../docs/demo/index.html', import.meta.url), 'utf8') },
    info: { title: 'OTP test protocol and artifact service', version: '1.0.0', description: API_DESCRIPTION },
    cookieKeys: auth.cookieKeys,
    extraPaths: { ...oauthOpenApiPaths, ...mcpOpenApiPaths },
    webhooks: webhookOperations(),
    mounts: {
      beforeAuth: [auth.oauth.middleware()],
      afterBody: [
        mcpMiddleware({ backend: mcpBackend, log: database.quietLog, baseUrl, issuer: auth.issuer, version: '1.0.0' }),
      ],
    },
    pages: parts.webConsole.middleware,
  });
}
