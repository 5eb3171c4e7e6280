// The API key cache: a used key costs no query, and revocation still works at once, in this process
// and (by notice) in another process on the same database.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { KeyCache } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { tenancy } from '../../src/platform/tenancy.js';
import { type Service, startService } from '../../src/service.js';
import { eventually } from '../support/eventually.js';
import { TestExecutor } from '../support/executor.js';
import { ADMIN_KEY, startTestService, type TestService } from '../support/service.js';

describe('API key cache', () => {
  let t: TestService;
  let other: Service;
  let otherDir: string;
  before(async () => {
    t = await startTestService();
    // A second service process's worth of engine on the same database (as behind a load balancer).
    otherDir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-test-other-'));
    other = await startService(
      loadConfig(process.env, {
        port: 0,
        wsPort: 0,
        host: '127.0.0.1',
        dataDir: otherDir,
        databaseUrl: t.database.url,
        bootstrapKey: ADMIN_KEY,
        logLevel: 'silent',
      }),
      createLogger('silent'),
    );
  });
  after(async () => {
    await other?.stop();
    await fs.rm(otherDir, { recursive: true, force: true });
    await t?.stop();
  });

  const contextVia = async (service: Service, key: string) =>
    (await fetch(`${service.restUrl}/api/v1/platform/context`, { headers: { authorization: `Bearer ${key}` } })).status;

  it('refuses a key revoked through another process as soon as its notice arrives', async () => {
    const key = await t.newKey('write');
    // Both processes have used (and kept) the key.
    expect(await contextVia(t.service, key)).to.equal(200);
    expect(await contextVia(other, key)).to.equal(200);
    const { id } = (await t.request('GET', '/api-keys')).body.items.find((k: { prefix: string }) =>
      key.startsWith(k.prefix),
    );
    expect((await t.request('DELETE', `/api-keys/${id}`)).status).to.equal(200);
    expect(await contextVia(t.service, key)).to.equal(401);
    await eventually(async () => expect(await contextVia(other, key)).to.equal(401), 2000);
    // The OTP listener of the other process refuses it too.
    const executor = await TestExecutor.connect(`${other.wsUrl}/otp`, { key });
    expect((await executor.closed).code).to.equal(4401);
  });

  it('keeps no principal whose lookup was in flight while a key was revoked', async () => {
    const key = await t.newKey('read');
    const cache = new KeyCache(t.service.db, tenancy, { ttlMs: 60_000, maxEntries: 10 });
    const keyId = (await t.service.db('api_keys').where('key_prefix', key.slice(0, 11)).first('id')).id as string;
    const inFlight = cache.authenticate(key);
    cache.invalidate(keyId);
    expect((await inFlight)?.keyId).to.equal(keyId);
    // Revoked behind the cache's back: had the in-flight answer been kept, this would still pass.
    await t.service.db('api_keys').where('id', keyId).update({ revoked_at: t.service.db.fn.now() });
    expect(await cache.authenticate(key)).to.equal(null);
  });

  it('keeps a used principal for its time to live, and nothing with a time to live of 0', async () => {
    const key = await t.newKey('read');
    const keyId = (await t.service.db('api_keys').where('key_prefix', key.slice(0, 11)).first('id')).id as string;
    const kept = new KeyCache(t.service.db, tenancy, { ttlMs: 60_000, maxEntries: 10 });
    const never = new KeyCache(t.service.db, tenancy, { ttlMs: 0, maxEntries: 10 });
    expect((await kept.authenticate(key))?.keyId).to.equal(keyId);
    expect((await never.authenticate(key))?.keyId).to.equal(keyId);
    await t.service.db('api_keys').where('id', keyId).update({ revoked_at: t.service.db.fn.now() });
    // No invalidation was called: the cache answers from memory, the uncached one from the database.
    expect((await kept.authenticate(key))?.keyId).to.equal(keyId);
    expect(await never.authenticate(key)).to.equal(null);
    kept.invalidate(keyId);
    expect(await kept.authenticate(key)).to.equal(null);
  });

  it('never keeps an unknown secret, and refuses one without the key prefix without a query', async () => {
    const cache = new KeyCache(t.service.db, tenancy, { ttlMs: 60_000, maxEntries: 10 });
    expect(await cache.authenticate('svc_pk_not_a_key_0123456789abcdefghijklmnopqrstu')).to.equal(null);
    expect(await cache.authenticate('Bearer nonsense')).to.equal(null);
  });
});
