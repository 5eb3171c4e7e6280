// /openapi.json: an OpenAPI 3.1 document generated from the route definitions (api.routes) and the
// named schemas they use. Nothing here is written by hand per route: a route added to the Api appears
// with its parameters, body, answer, security and error answers.

import { openApiComponentSchemas, toOpenApiSchema } from '../validation/schema-registry.js';
import { IDEMPOTENCY_HEADER } from './idempotency.js';
import { WINDOW_SEC } from './middleware/rate-limit.js';
import type { JsonSchema, RouteDef } from './route.js';
import { ErrorBodySchema, QuotaExceededBodySchema } from './schemas.js';

export const API_PREFIX = '/api/v1';
export const OPENAPI_PATH = '/openapi.json';
const SECURITY = 'apiKey';

const errorResponses: Record<number, { name: string; description: string; schema?: string; headers?: string[] }> = {
  400: {
    name: 'BadRequest',
    description: 'VALIDATION_ERROR: the request is malformed; details.fields names every failing field',
  },
  401: {
    name: 'Unauthorized',
    description: 'UNAUTHORIZED: no API key, or one that is unknown, revoked or of a deleted project',
  },
  402: {
    name: 'QuotaExceeded',
    description:
      "QUOTA_EXCEEDED: the tier's artifact or storage quota is used up; ai_quota_exceeded: the tenant's monthly AI calls are used up (details.renewsAt says when they renew). Nothing was written",
    schema: QuotaExceededBodySchema.$ref,
  },
  403: { name: 'Forbidden', description: "FORBIDDEN: the key's scope does not allow this" },
  404: {
    name: 'NotFound',
    description: "NOT_FOUND: no such record in the key's project (another project's id is not found either)",
  },
  409: {
    name: 'Conflict',
    description:
      'CONFLICT: the request clashes with the current state (an archived project, a closed test run, a duplicate, an Idempotency-Key still in flight)',
    headers: ['Retry-After'],
  },
  412: {
    name: 'PreconditionFailed',
    description: 'PRECONDITION_FAILED: If-Match names a revision that is no longer current',
  },
  413: { name: 'PayloadTooLarge', description: 'PAYLOAD_TOO_LARGE: the body is over the limit' },
  415: { name: 'UnsupportedMediaType', description: 'UNSUPPORTED_MEDIA_TYPE: the body is not of an accepted type' },
  422: {
    name: 'IdempotencyKeyReused',
    description: 'IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with another body',
  },
  429: {
    name: 'RateLimited',
    description: `RATE_LIMITED: too many requests with this key in ${WINDOW_SEC} s`,
    headers: ['Retry-After', 'RateLimit', 'RateLimit-Policy'],
  },
  500: { name: 'Internal', description: 'INTERNAL: the service failed; nothing is promised about partial effects' },
  502: {
    name: 'AiProviderFailed',
    description:
      'ai_provider_failed: the configured language model failed, or answered twice with output that does not validate',
  },
  503: {
    name: 'Unavailable',
    description:
      'database_unavailable or storage_unavailable: the database or the file store cannot be reached right now; the request was not completed, retry after Retry-After seconds. ai_not_configured (a route that needs a language model): no model is configured (AI_BASE_URL, AI_MODEL)',
    headers: ['Retry-After'],
  },
};

const headers = {
  ETag: {
    description: 'Revision of the record; give it in If-Match to update only that revision',
    schema: { type: 'string' },
  },
  Location: { description: 'Address of the created record', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  RateLimit: {
    description: 'Remaining requests (r) and seconds until the window resets (t)',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': { description: 'Quota (q) per window of w seconds, per API key', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key',
    schema: { type: 'string' },
  },
};

/** The error statuses a route may answer: those of its kind plus those it names. */
export function errorStatuses(def: RouteDef): number[] {
  // Any route may find the database (or, for files, the store) down: 503 with Retry-After.
  const out = new Set<number>([500, 503, ...(def.errors ?? [])]);
  const writes = def.method !== 'get';
  // Any route: text that cannot be stored in the path, a query parameter or a header (storable-text.ts).
  out.add(400);
  if (def.body || def.multipart) out.add(413);
  if (/:\w+/.test(def.path)) out.add(404);
  if (def.conditional) out.add(412);
  if (def.charge) out.add(402); // a metered allowance used up
  if (def.auth !== 'none') {
    out.add(401).add(403).add(429);
    if (writes) out.add(409); // the project is archived
    if (def.method === 'post') out.add(409).add(422); // Idempotency-Key in flight, or reused
  }
  return [...out].sort((a, b) => a - b);
}

export function openApiPath(path: string, prefix = API_PREFIX): string {
  return prefix + path.replace(/:(\w+)/g, '{$1}');
}

function camel(words: string[]): string {
  return words
    .filter(Boolean)
    .map((w, i) => {
      const parts = w.split(/[^A-Za-z0-9]+/).filter(Boolean);
      return parts.map((p, j) => (i === 0 && j === 0 ? p.toLowerCase() : p[0].toUpperCase() + p.slice(1))).join('');
    })
    .join('');
}

export function operationIdOf(def: RouteDef): string {
  if (def.operationId) return def.operationId;
  const segments = def.path
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith(':') ? `by-${s.slice(1)}` : s));
  return camel([def.method, ...segments]);
}

function successResponse(def: RouteDef): [string, Record<string, unknown>] {
  const status = def.status ?? 200;
  const response: Record<string, unknown> = { description: def.summary };
  const responseHeaders: Record<string, unknown> = {};
  if (def.etag) responseHeaders.ETag = { $ref: '#/components/headers/ETag' };
  if (status === 201 || (status >= 300 && status < 400))
    responseHeaders.Location = { $ref: '#/components/headers/Location' };
  if (def.method === 'post' && def.auth !== 'none')
    responseHeaders['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  if (Object.keys(responseHeaders).length) response.headers = responseHeaders;
  if (def.response) response.content = { 'application/json': { schema: toOpenApiSchema(def.response) } };
  else if (def.responseType) response.content = { [def.responseType]: {} };
  for (const alternate of def.alternates ?? []) {
    const content = (response.content ??= {}) as Record<string, { schema: JsonSchema; description?: string }>;
    const schema = toOpenApiSchema(alternate.schema);
    const same = content[alternate.contentType];
    // Two representations of one media type (a run, or its CTRF report): either schema.
    content[alternate.contentType] = same ? { schema: { oneOf: [same.schema, schema] } } : { schema };
  }
  if (def.alternates?.length)
    response.description = `${def.summary}. ${def.alternates.map((a) => a.description).join('. ')}`;
  return [String(status), response];
}

function operation(def: RouteDef): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const [, name] of def.path.matchAll(/:(\w+)/g)) {
    parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  const query = def.query as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const { description, ...rest } = schema as { description?: string };
    parameters.push({
      name,
      in: 'query',
      required: query?.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: toOpenApiSchema(rest),
      ...((rest as { type?: string }).type === 'array' ? { style: 'form', explode: true } : {}),
    });
  }
  if (def.conditional) parameters.push({ $ref: '#/components/parameters/IfMatch' });
  if (def.method === 'post' && def.auth !== 'none') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const responses: Record<string, unknown> = Object.fromEntries([successResponse(def)]);
  for (const status of errorStatuses(def))
    responses[String(status)] = { $ref: `#/components/responses/${errorResponses[status].name}` };

  const op: Record<string, unknown> = {
    operationId: operationIdOf(def),
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [def.tag],
    security: def.auth === 'none' ? [] : [{ [SECURITY]: [def.auth] }],
    ...(def.auth !== 'none' ? { 'x-required-scope': def.auth } : {}),
    ...(parameters.length ? { parameters } : {}),
    responses,
  };
  if (def.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: toOpenApiSchema(def.body) } } };
  } else if (def.multipart) {
    op.requestBody = { required: true, content: { 'multipart/form-data': { schema: toOpenApiSchema(def.multipart) } } };
  } else if (def.bodyTypes?.length) {
    op.requestBody = {
      required: true,
      description: def.bodyTypes.map((b) => `${b.contentType}: ${b.description}`).join('. '),
      content: Object.fromEntries(def.bodyTypes.map((b) => [b.contentType, { schema: toOpenApiSchema(b.schema) }])),
    };
  }
  return op;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

/** Path items of endpoints that are not RouteDefs (OAuth, MCP), added to the document as written. */
export type ExtraPaths = Record<string, Record<string, unknown>>;

/** What each tag of /openapi.json groups (a tag without one is reported by the OpenAPI linter in the tests). */
const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  ai: 'Answers from run history: failures by cause, triage, flakiness and quarantine, locator healing, drafts by a model',
  'api-keys': "The project's API keys: mint, list, revoke (admin)",
  assets: 'Buckets and the files in them: uploads, signed downloads, public assets',
  bugs: 'Bugs, linked to the test cases and results that found them',
  kb: 'Knowledge-base entries',
  mcp: 'The MCP endpoint for agents (Streamable HTTP) and its discovery',
  memories: "Memories: what an agent keeps of a project's work",
  meta: 'This document',
  milestones: 'Milestones of releases',
  notes: 'Notes',
  oauth: 'The OAuth 2.1 authorization server: metadata, registration, tokens, keys',
  otp: 'OTP runs, executor sessions, recordings and evidence: the REST side of the test protocol',
  'platform/context': 'Who the credential is: its tenant, project and scope',
  'platform/entitlement': "The tier's limits and what the project has used of them",
  'platform/groups': 'Groups of projects',
  'platform/lifecycle': 'Archiving, restoring and deleting a project (admin)',
  'platform/projects': 'Projects of the tenant',
  'platform/settings': "The project's settings (readiness thresholds, ...)",
  'release-plans': 'Release plans',
  releases: 'Releases and their readiness',
  requirements: 'Requirements and their coverage by test cases',
  specifications: 'Specifications',
  'tests/cases': 'Test cases: steps in the OTP step shape, runnable as they are',
  'tests/plans': 'Test plans: ordered test cases run together',
  'tests/results': 'Test results: one per test case of a test run, recorded by OTP runs, imports or the API',
  'tests/runs': 'Test runs: a set of results, imported from JUnit or CTRF or recorded by OTP runs, as reports',
  tickets: 'Tickets',
  webhooks: 'Webhook subscriptions and their delivery log',
  'webhook events': 'What a subscription receives: one POST per event (Standard Webhooks signatures)',
};

export function buildOpenApiDocument(
  routes: readonly RouteDef[],
  info: OpenApiInfo,
  extraPaths: ExtraPaths = {},
  webhooks: ExtraPaths = {},
): Record<string, unknown> {
  const paths = routePaths(routes);
  paths[OPENAPI_PATH] = documentPathItem();
  for (const [path, item] of Object.entries(extraPaths)) {
    if (paths[path]) throw new Error(`two descriptions of ${path}`);
    paths[path] = item;
  }
  const tags = new Set([...routes.map((def) => def.tag), ...tagsOf(extraPaths), ...tagsOf(webhooks)]);
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/', description: 'This service; REST paths carry /api/v1' }],
    tags: [...tags, 'meta'].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    paths,
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    components: {
      schemas: openApiComponentSchemas(),
      securitySchemes: securitySchemes(),
      parameters: headerParameters(),
      headers,
      responses: errorResponseComponents(),
    },
  };
}

/** The path items of the routes; two routes of one method and path, or two operations of one name, are refused. */
function routePaths(routes: readonly RouteDef[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const def of routes) {
    const path = openApiPath(def.path);
    paths[path] ??= {};
    if (paths[path][def.method]) throw new Error(`two routes for ${def.method.toUpperCase()} ${path}`);
    const operationId = operationIdOf(def);
    if (operationIds.has(operationId)) throw new Error(`two operations named ${operationId}`);
    operationIds.add(operationId);
    paths[path][def.method] = operation(def);
  }
  return paths;
}

/** The tags of the operations of path items written as they are (OAuth, MCP, webhooks). */
function tagsOf(items: ExtraPaths): string[] {
  return Object.values(items).flatMap((item) =>
    Object.values(item).flatMap((op) => (op as { tags?: string[] }).tags ?? []),
  );
}

/** The path item of /openapi.json itself. */
function documentPathItem(): Record<string, unknown> {
  return {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document: every REST route, its schemas, security and error answers',
      tags: ['meta'],
      security: [],
      responses: {
        200: { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } },
        500: { $ref: '#/components/responses/Internal' },
      },
    },
  };
}

/** One response component per error answer, with the headers it carries. */
function errorResponseComponents(): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const { name, description, schema, headers: names } of Object.values(errorResponses)) {
    responses[name] = {
      description,
      ...(names ? { headers: Object.fromEntries(names.map((h) => [h, { $ref: `#/components/headers/${h}` }])) } : {}),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema ?? ErrorBodySchema.$ref}` } } },
    };
  }
  return responses;
}

function securitySchemes(): Record<string, unknown> {
  return {
    [SECURITY]: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'svc_pk_... or JWT',
      description:
        'Authorization: Bearer <API key or OAuth access token>. An access token (a JWT from /oauth/token) acts as the key that vouched for it, with at most its scope. A key belongs to one tenant and project and has one scope: read (reads), write (changes and OTP sessions) or admin (keys, webhooks, projects and their lifecycle). Each operation names the scope it needs.',
    },
  };
}

/** The request headers routes refer to (conditional writes, idempotent POSTs). */
function headerParameters(): Record<string, unknown> {
  return {
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description: 'Only apply the change if the record is still at this revision (its ETag); otherwise 412',
      schema: { type: 'string' },
    },
    IdempotencyKey: {
      name: IDEMPOTENCY_HEADER,
      in: 'header',
      required: false,
      description:
        'A unique value per logical request (e.g. a UUID). A retry with the same key, by the same API key on the same path, gets the first successful answer again instead of a second write; the same key with another body is a 422. An answer that held a secret shown once (a new API key) is not repeated: the retry gets 409 with the id of what was created',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
  };
}
