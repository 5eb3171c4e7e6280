// PostgreSQL stopped under a running service (an embedded server this test starts, stops and starts
// again on the same port): REST answers 503 database_unavailable with Retry-After at once (not after
// the pool's acquire time-out), MCP tools answer isError with the same body, /readyz says 503, and
// no answer carries the database's address, SQL, a stack or a connection string. Once the server is
// back, the same requests answer as before.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ACQUIRE_TIMEOUT_MS } from '../../src/db/connect.js';
import { type EmbeddedServer, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { eventually } from '../support/eventually.js';
import { startTestService, type TestService } from '../support/service.js';

/** Text an answer must never carry, whatever failed. */
function expectNothingInternal(text: string, databaseUrl: string): void {
  const url = new URL(databaseUrl);
  expect(text).not.to.include(`${url.hostname}:${url.port}`);
  expect(text).not.to.include(url.port);
  expect(text).not.to.match(/postgres(ql)?:\/\//i);
  expect(text).not.to.match(/\b(select|insert|update|delete)\b.*\b(from|into|set)\b/i);
  expect(text).not.to.match(/\n?\s{4}at /);
  expect(text).not.to.match(/ECONN|knex|pg_/i);
}

async function mcpCall(t: TestService, name: string, args: Record<string, unknown> = {}) {
  const res = await fetch(`${t.service.restUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t.adminKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('Database outage: REST and MCP answers (embedded PostgreSQL stopped and started)', function () {
  this.timeout(180_000);
  let dir: string;
  let pg: EmbeddedServer;
  let port: number;
  let t: TestService;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-outage-pg-'));
    pg = await startEmbeddedPostgres(dir, { database: 'otp' });
    port = Number(new URL(pg.url).port);
    t = await startTestService({ databaseUrl: pg.url }, { database: { url: pg.url, drop: async () => {} } });
  });
  after(async () => {
    await t?.stop();
    await pg?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('answers 503 database_unavailable with Retry-After while it is down, and as before once it is back', async () => {
    const created = await t.request('POST', '/tests/cases', {
      body: { title: 'before the outage', steps: [{ otp: { action: 'navigate', url: 'https://example.com' } }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect((await t.request('GET', '/tests/cases')).status).to.equal(200);

    await pg.stop();

    for (const [method, urlPath, body] of [
      ['GET', '/tests/cases', undefined],
      ['GET', `/tests/cases/${created.body.id}`, undefined],
      [
        'POST',
        '/tests/cases',
        { title: 'during the outage', steps: [{ otp: { action: 'navigate', url: 'https://example.com' } }] },
      ],
    ] as const) {
      const started = performance.now();
      const answer = await t.request(method, urlPath, { body });
      const elapsed = performance.now() - started;
      expect(answer.status, `${method} ${urlPath}: ${JSON.stringify(answer.body)}`).to.equal(503);
      expect(answer.body.error.code).to.equal('database_unavailable');
      expect(answer.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
      expectNothingInternal(JSON.stringify(answer.body), pg.url);
      // Told at once, not after the pool gave up waiting for a connection.
      expect(elapsed, `${method} ${urlPath} took ${elapsed.toFixed(0)} ms`).to.be.below(ACQUIRE_TIMEOUT_MS);
    }
    const ready = await fetch(`${t.service.restUrl}/readyz`);
    expect(ready.status).to.equal(503);
    expectNothingInternal(await ready.text(), pg.url);

    // MCP: a tool that needs the database answers isError with the same body (or, when the key itself
    // cannot be checked, the HTTP answer is that 503).
    const tool = await mcpCall(t, 'svc_list_test_cases', {});
    expectNothingInternal(tool.text, pg.url);
    if (tool.status === 200) {
      const result = JSON.parse(tool.text).result;
      expect(result.isError).to.equal(true);
      expect(result.structuredContent.error.code).to.equal('database_unavailable');
    } else {
      expect(tool.status).to.equal(503);
      expect(JSON.parse(tool.text).error.code).to.equal('database_unavailable');
      expect(tool.headers.get('retry-after')).to.match(/^[1-9]\d*$/);
    }

    pg = await startEmbeddedPostgres(dir, { database: 'otp', port });
    await eventually(async () => expect((await fetch(`${t.service.restUrl}/readyz`)).status).to.equal(200), 30_000);
    const list = await eventually(async () => {
      const answer = await t.request('GET', '/tests/cases');
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      return answer;
    }, 10_000);
    expect(list.body.items.map((c: { id: string }) => c.id)).to.include(created.body.id);
    const after = await t.request('POST', '/tests/cases', {
      body: { title: 'after the outage', steps: [{ otp: { action: 'navigate', url: 'https://example.com' } }] },
    });
    expect(after.status, JSON.stringify(after.body)).to.equal(201);
    const tool2 = await mcpCall(t, 'svc_list_test_cases', {});
    expect(tool2.status).to.equal(200);
    expect(JSON.parse(tool2.text).result.isError).to.not.equal(true);
  });
});
