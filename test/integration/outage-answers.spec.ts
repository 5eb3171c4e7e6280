// One normaliser for every door: with the database cut away (a relay in front of a real PostgreSQL,
// cut and restored by the test) and with the object store stopped (a real s3rver), REST answers and
// MCP tool results say database_unavailable / storage_unavailable with Retry-After, and none of them
// carries the database's address, a statement, a stack or a connection string.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { upload } from '../support/assets.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

function expectNothingInternal(text: string, urls: string[]): void {
  for (const raw of urls) {
    const url = new URL(raw);
    expect(text).not.to.include(`${url.hostname}:${url.port}`);
    expect(text).not.to.include(url.port);
  }
  expect(text).not.to.match(/postgres(ql)?:\/\//i);
  expect(text).not.to.match(/\b(select|insert|update|delete)\b/i);
  expect(text).not.to.match(/\s{4}at /);
  expect(text).not.to.match(/ECONN|knex|127\.0\.0\.1/i);
}

describe('Outage answers through REST and MCP (database relay cut, s3rver stopped)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let proxy: TcpProxy;
  let s3: TestS3;
  let t: TestService;

  before(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port));
    s3 = await startS3();
    t = await startTestService(
      { storage: { defaultDriver: 's3', s3: s3.config, maxUploadBytes: 1024 * 1024 } },
      { database: { url: proxy.via(database.url), drop: () => database.drop() } },
    );
    const bucket = await t.request('POST', '/assets/buckets', { body: { name: 'files' } });
    expect(bucket.status, JSON.stringify(bucket.body)).to.equal(201);
  });
  after(async () => {
    await proxy?.restore();
    await s3?.resume();
    await t?.stop();
    await proxy?.close();
    await s3?.stop();
  });

  const mcp = async (name: string, args: Record<string, unknown>) => {
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
  };

  it('says database_unavailable in REST and MCP, with nothing internal, while the database is cut', async () => {
    // The key is in the key cache: MCP reaches the tool, whose query fails.
    expect((await mcp('svc_list_test_cases', {})).status).to.equal(200);
    await proxy.cut();
    try {
      const urls = [database.url, proxy.via(database.url)];
      for (const [method, path, body] of [
        ['GET', '/tests/cases', undefined],
        ['POST', '/tests/cases', { title: 'x', steps: [{ otp: { action: 'navigate', url: 'https://example.com' } }] }],
        ['GET', '/assets/buckets/files/assets', undefined],
        ['POST', '/otp/runs', { testCaseIds: ['tc_01hzzzzzzzzzzzzzzzzzzzzzzz'] }],
      ] as const) {
        const answer = await t.request(method, path, { body });
        expect(answer.status, `${method} ${path} ${JSON.stringify(answer.body)}`).to.equal(503);
        expect(answer.body.error.code).to.equal('database_unavailable');
        expect(answer.headers.get('retry-after')).to.equal('5');
        expectNothingInternal(JSON.stringify(answer.body), urls);
      }
      const tool = await mcp('svc_list_test_cases', {});
      expectNothingInternal(tool.text, urls);
      expect(tool.status).to.equal(200);
      const result = JSON.parse(tool.text).result;
      expect(result.isError).to.equal(true);
      expect(result.structuredContent.error.code).to.equal('database_unavailable');
      const ready = await fetch(`${t.service.restUrl}/readyz`);
      expect(ready.status).to.equal(503);
    } finally {
      await proxy.restore();
    }
    const back = await t.request('GET', '/tests/cases');
    expect(back.status, JSON.stringify(back.body)).to.equal(200);
  });

  it('says storage_unavailable for an upload while the store is stopped, with nothing internal', async () => {
    await s3.halt();
    try {
      const answer = await upload(t, 'files', randomBytes(20_000));
      expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
      expect(answer.body.error.code).to.equal('storage_unavailable');
      expect(answer.headers.get('retry-after')).to.equal('5');
      expectNothingInternal(JSON.stringify(answer.body), [s3.config.endpoint!, database.url]);
    } finally {
      await s3.resume();
    }
    expect((await upload(t, 'files', randomBytes(20_000))).status).to.equal(201);
  });
});
