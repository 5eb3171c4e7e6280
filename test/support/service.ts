// Starts a real service (REST + OTP listeners on free ports) on a fresh database for one suite.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKey } from '../../src/auth/keys.js';
import type { Scope } from '../../src/auth/principal.js';
import { type ConfigOverrides, loadConfig } from '../../src/config.js';
import { newId } from '../../src/ids.js';
import { createLogger, type Logger } from '../../src/log.js';
import { type Service, startService } from '../../src/service.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { OpenApiResponseChecker, type RecordedResponse } from './openapi-check.js';

export const ADMIN_KEY = 'svc_pk_test_admin_key_0123456789abcdefghijklmnop';

export interface TestService {
  service: Service;
  database: TestDatabase;
  api: string;
  otpUrl: string;
  adminKey: string;
  /** Calls the REST API with a key (the admin key unless given); answers status, body and headers. */
  request(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** A new tenant and project with a key of the given scope; answers the key and the project id. */
  newProject(scope?: Scope): Promise<{ key: string; projectId: string; tenantId: string }>;
  /** Every response request() received, checked against /openapi.json when the suite stops. */
  responses: RecordedResponse[];
  /** Another key of the default project. */
  newKey(scope: Scope): Promise<string>;
  stop(): Promise<void>;
}

/**
 * `log`: where the service logs (silent unless TEST_LOG=1); a test may capture it. `database`: one the
 * test made itself (a server it stops and starts); a fresh one on the test server otherwise.
 */
export async function startTestService(
  overrides: ConfigOverrides = {},
  options: { log?: Logger; database?: TestDatabase } = {},
): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase());
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-test-data-'));
  const config = loadConfig(process.env, {
    port: 0,
    wsPort: 0,
    host: '127.0.0.1',
    dataDir,
    databaseUrl: database.url,
    bootstrapKey: ADMIN_KEY,
    logLevel: 'silent',
    // Stopping a suite's service does not wait for the runs it leaves in flight.
    drainMs: 0,
    ...overrides,
    // Receivers in tests listen on loopback.
    webhooks: { allowPrivateTargets: true, ...overrides.webhooks },
  });
  const service = await startService(
    config,
    options.log ?? createLogger(process.env.TEST_LOG === '1' ? 'debug' : 'silent'),
  );
  const api = `${service.restUrl}/api/v1`;
  const responses: RecordedResponse[] = [];
  const request: TestService['request'] = async (method, urlPath, options = {}) => {
    const key = options.key === undefined ? ADMIN_KEY : options.key;
    const headers: Record<string, string> = { ...options.headers };
    if (key) headers.authorization = `Bearer ${key}`;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${urlPath.startsWith('/openapi') ? service.restUrl : api}${urlPath}`, {
      method,
      headers,
      body:
        options.body === undefined
          ? undefined
          : typeof options.body === 'string'
            ? options.body
            : JSON.stringify(options.body),
      redirect: 'manual',
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    const root = urlPath.startsWith('/openapi') ? '' : '/api/v1';
    responses.push({
      method,
      path: root + urlPath.split('?')[0],
      status: res.status,
      body,
      contentType: res.headers.get('content-type'),
    });
    return { status: res.status, body, headers: res.headers };
  };
  const owner = await service.db('api_keys').first('tenant_id', 'project_id');
  return {
    service,
    database,
    api,
    otpUrl: `${service.wsUrl}/otp`,
    adminKey: ADMIN_KEY,
    request,
    responses,
    newProject: async (scope = 'admin') => {
      const tenantId = newId('ten');
      const projectId = newId('prj');
      await service.db('tenants').insert({ id: tenantId, name: 'other tenant' });
      await service.db('projects').insert({ id: projectId, tenant_id: tenantId, name: 'other project' });
      const { secret } = await createKey(service.db, { tenantId, projectId }, { name: 'test', scope });
      return { key: secret, projectId, tenantId };
    },
    newKey: async (scope) => {
      const { secret } = await createKey(
        service.db,
        { tenantId: owner.tenant_id, projectId: owner.project_id },
        { name: scope, scope },
      );
      return secret;
    },
    stop: async () => {
      // Every response of the suite must match the API description (a route missing from it fails).
      const doc = await (await fetch(`${service.restUrl}/openapi.json`)).json();
      const problems = new OpenApiResponseChecker(doc).checkAll(responses);
      await service.stop();
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
      if (problems.length) throw new Error(`responses that do not match /openapi.json:\n${problems.join('\n')}`);
    },
  };
}
