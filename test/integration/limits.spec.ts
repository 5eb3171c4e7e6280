// The artifact quota (402, nothing written) and the per-key rate limit (429 with Retry-After and
// RateLimit headers), on a service whose limits are set low through its config.
import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { startService } from '../../src/service.js';
import { startTestService, type TestService } from '../support/service.js';

const QUOTA = 3;
const PER_MINUTE = 8;
// How often each process sends its in-memory counts and learns the others'.
const SYNC_MS = 100;

describe('Limits: artifact quota and rate limit', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({
      limits: { artifacts: QUOTA, requestsPerMinute: PER_MINUTE, rateLimitSyncMs: SYNC_MS },
    });
  });
  after(async () => t?.stop());

  const artifactsOf = async (projectId: string) =>
    Number((await t.service.db('artifacts').where('project_id', projectId).count({ n: '*' }).first())?.n);

  it('refuses a create beyond the quota with 402 QUOTA_EXCEEDED and upgradeUrl, writing nothing', async () => {
    const { key, projectId } = await t.newProject('admin');
    const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
    expect((await req('POST', '/bugs', { title: 'one' })).status).to.equal(201);
    expect((await req('POST', '/notes', { content: 'two' })).status).to.equal(201);
    const third = await req('POST', '/requirements', { title: 'three' });
    expect(third.status).to.equal(201);
    const over = await req('POST', '/tests/cases', { title: 'four', steps: [] });
    expect(over.status).to.equal(402);
    expect(over.body.error.code).to.equal('QUOTA_EXCEEDED');
    expect(over.body.error.details).to.deep.include({ limit: QUOTA, used: QUOTA });
    expect(over.body.upgradeUrl).to.match(/^https:\/\//);
    expect(await artifactsOf(projectId)).to.equal(QUOTA);
    // Freeing one makes room again.
    expect((await req('DELETE', `/requirements/${third.body.id}`)).status).to.equal(204);
    expect((await req('POST', '/tests/cases', { title: 'four', steps: [] })).status).to.equal(201);
  });

  it('never overshoots the quota when creates race', async () => {
    const { key, projectId } = await t.newProject('admin');
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => t.request('POST', '/notes', { key, body: { content: `race ${i}` } })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).to.deep.equal([201, 201, 201, 402, 402, 402]);
    expect(await artifactsOf(projectId)).to.equal(QUOTA);
  });

  it('answers 429 RATE_LIMITED with Retry-After and RateLimit headers past the per-key limit; other keys go on', async () => {
    const { key } = await t.newProject('admin');
    const other = await t.newProject('read');
    let last: Awaited<ReturnType<TestService['request']>> | undefined;
    for (let i = 1; i <= PER_MINUTE; i++) {
      last = await t.request('GET', '/platform/context', { key });
      expect(last.status, `request ${i}`).to.equal(200);
    }
    expect(last!.headers.get('ratelimit-policy')).to.equal(`"per-key";q=${PER_MINUTE};w=60`);
    expect(last!.headers.get('ratelimit')).to.match(/^"per-key";r=0;t=\d+$/);
    const limited = await t.request('GET', '/platform/context', { key });
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(limited.headers.get('ratelimit')).to.equal(`"per-key";r=0;t=${retryAfter}`);
    // Writes are refused too, and write nothing.
    const write = await t.request('POST', '/notes', { key, body: { content: 'too many' } });
    expect(write.status).to.equal(429);
    expect((await t.request('GET', '/platform/context', { key: other.key })).status).to.equal(200);
    // Requests without a valid key are not counted against anyone (and get 401).
    expect((await t.request('GET', '/platform/context', { key: null })).status).to.equal(401);
  });

  it('counts a burst of concurrent requests exactly: the limit passes, the rest get 429', async () => {
    // Concurrent requests of one key are counted together in one statement; each must still get
    // its own place in the count.
    const { key } = await t.newProject('admin');
    const statuses = await Promise.all(
      Array.from({ length: PER_MINUTE + 5 }, () =>
        t.request('GET', '/platform/context', { key }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).to.have.length(PER_MINUTE);
    expect(statuses.filter((s) => s === 429)).to.have.length(5);
    const remaining = await Promise.all(
      Array.from({ length: 3 }, () => t.request('GET', '/platform/context', { key }).then((r) => r.status)),
    );
    expect(remaining).to.deep.equal([429, 429, 429]);
  });

  it('shares the count and Idempotency-Key answers between service instances on one database', async () => {
    const second = await startService({ ...t.service.config, port: 0, wsPort: 0 }, createLogger('silent'));
    try {
      const { key } = await t.newProject('admin');
      const at = (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
        fetch(`${base}/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const bases = [t.service.restUrl, second.restUrl];
      const first = await at(bases[0], 'POST', '/notes', { content: 'once' }, { 'idempotency-key': 'shared' });
      const replay = await at(bases[1], 'POST', '/notes', { content: 'once' }, { 'idempotency-key': 'shared' });
      expect(replay.status).to.equal(201);
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect((await replay.json()).id).to.equal((await first.json()).id);
      for (let i = 3; i <= PER_MINUTE; i++)
        expect((await at(bases[i % 2], 'GET', '/platform/context')).status).to.equal(200);
      // Each process learns the other's count at its next sync; after that, neither lets one more through.
      // Two syncs each: the first sends every count, the second learns what the other sent.
      const syncBoth = () => Promise.all([t.service.rateCounter!.sync(), second.rateCounter!.sync()]);
      await syncBoth();
      await syncBoth();
      for (const base of bases) expect((await at(base, 'GET', '/platform/context')).status).to.equal(429);
    } finally {
      await second.stop();
    }
  });
});
