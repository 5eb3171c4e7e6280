// One table drives the same checks over every resource group: create, read, list with a cursor,
// filters, update with If-Match, delete, validation errors naming each field, tenant isolation,
// scopes and Idempotency-Key. The table must name every artifact definition the service has.
import { expect } from 'chai';
import { artifactDefinitions } from '../../src/artifacts/index.js';
import { startTestService, type TestService } from '../support/service.js';

type Body = Record<string, any>;
type Req = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any; headers: Headers }>;

interface Fixture {
  path: string;
  /** Scope needed to write (and, for admin-only groups, to read). */
  writeScope: 'write' | 'admin';
  readScope?: 'read' | 'admin';
  /** Records it refers to, made once per project. */
  setup?(req: Req): Promise<Body>;
  /** A valid create body; i makes each one distinct. */
  make(ctx: Body, i: number): Body;
  /** Another valid body that `filter` selects and make's records do not. */
  alt(ctx: Body): Body;
  filter(ctx: Body): string;
  update: Body;
  invalid: { body: Body; fields: string[] };
  /** Fields of the create body that are never answered. */
  hidden?: string[];
  /** The create answer holds a secret shown once: a replay is a 409 naming what was created. */
  secretInAnswer?: boolean;
}

const navigate = { otp: { action: 'navigate', url: 'https://app.test/login' } };

const created = async (req: Req, path: string, body: Body) => {
  const res = await req('POST', path, body);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(201);
  return res.body.id as string;
};

const fixtures: Fixture[] = [
  {
    path: 'bugs',
    writeScope: 'write',
    make: (_, i) => ({
      title: `Login button dead ${i}`,
      severity: 'critical',
      stepsToReproduce: ['open /login', 'click Sign in'],
      labels: ['ui'],
    }),
    alt: () => ({
      title: 'Typo on the export page',
      severity: 'trivial',
      status: 'closed',
      assignee: 'ada',
      labels: ['copy', 'ui'],
    }),
    filter: () => 'status=closed&assignee=ada&labels=copy',
    update: { status: 'resolved', assignee: 'bob' },
    invalid: {
      body: { title: '', severity: 'blocker', stepsToReproduce: 'click' },
      fields: ['body.title', 'body.severity', 'body.stepsToReproduce'],
    },
  },
  {
    path: 'tickets',
    writeScope: 'write',
    make: (_, i) => ({ title: `Add CSV export ${i}`, type: 'feature', estimate: 3 }),
    alt: () => ({ title: 'Rename the button', type: 'chore', status: 'done', priority: 'low' }),
    filter: () => 'type=chore&status=done',
    update: { status: 'in_progress', dueDate: '2026-12-31' },
    invalid: {
      body: { title: 5, estimate: -1, dueDate: 'tomorrow' },
      fields: ['body.title', 'body.estimate', 'body.dueDate'],
    },
  },
  {
    path: 'requirements',
    writeScope: 'write',
    make: (_, i) => ({ title: `Users can sign in ${i}`, acceptanceCriteria: ['valid credentials sign in'] }),
    alt: () => ({ title: 'Pages load under 2 s', type: 'non_functional', priority: 'must', status: 'approved' }),
    filter: () => 'priority=must&type=non_functional',
    update: { status: 'approved', externalId: 'REQ-12' },
    invalid: {
      body: { priority: 'maybe', acceptanceCriteria: [''] },
      fields: ['body.title', 'body.priority', 'body.acceptanceCriteria[0]'],
    },
  },
  {
    path: 'specifications',
    writeScope: 'write',
    make: (_, i) => ({ title: `Login flow ${i}`, content: '# Login\nThe user signs in.' }),
    alt: () => ({ title: 'Export format', format: 'text', status: 'approved' }),
    filter: () => 'status=approved&status=deprecated&format=text',
    update: { revision: '1.1', status: 'in_review' },
    invalid: { body: { title: 'x', format: 'pdf', status: 'final' }, fields: ['body.format', 'body.status'] },
  },
  {
    path: 'tests/cases',
    writeScope: 'write',
    make: (_, i) => ({ title: `Sign in ${i}`, steps: [navigate] }),
    alt: () => ({ title: 'Export', steps: [], status: 'draft', labels: ['smoke'] }),
    filter: () => 'status=draft&labels=smoke',
    update: { title: 'Sign in works', preconditions: 'a user exists' },
    invalid: { body: { title: '', steps: [{ otp: { action: 'clik' } }] }, fields: ['body.title', 'body.steps[0]'] },
  },
  {
    path: 'tests/plans',
    writeScope: 'write',
    setup: async (req) => ({ caseId: await created(req, '/tests/cases', { title: 'in a plan', steps: [] }) }),
    make: (ctx, i) => ({ title: `Smoke ${i}`, testCaseIds: [ctx.caseId] }),
    alt: () => ({ title: 'Nightly', testCaseIds: [], status: 'draft' }),
    filter: () => 'status=draft',
    update: { testCaseIds: [] },
    invalid: {
      body: { title: 'x', testCaseIds: ['tc_ok', 'nope'], status: 'live' },
      fields: ['body.testCaseIds[1]', 'body.status'],
    },
  },
  {
    path: 'tests/runs',
    writeScope: 'write',
    setup: async (req) => ({ releaseId: await created(req, '/releases', { name: '9.9.9' }) }),
    make: (ctx, i) => ({ title: `2.3 regression ${i}`, releaseId: ctx.releaseId, environment: 'staging' }),
    alt: () => ({ title: 'Nightly', status: 'closed' }),
    filter: () => 'status=closed',
    update: { build: 'abc123' },
    invalid: { body: { title: 'x', status: 'done', releaseId: 'bug_1' }, fields: ['body.status', 'body.releaseId'] },
  },
  {
    path: 'tests/results',
    writeScope: 'write',
    setup: async (req) => ({
      testCaseId: await created(req, '/tests/cases', { title: 'has results', steps: [] }),
      testRunId: await created(req, '/tests/runs', { title: 'collects results' }),
    }),
    make: (ctx, i) => ({
      testRunId: ctx.testRunId,
      testCaseId: ctx.testCaseId,
      status: 'passed',
      durationMs: 1000 + i,
    }),
    alt: (ctx) => ({
      testRunId: ctx.testRunId,
      testCaseId: ctx.testCaseId,
      status: 'failed',
      comment: 'button missing',
    }),
    filter: (ctx) => `status=failed&testCaseId=${ctx.testCaseId}`,
    update: { comment: 'flaky', status: 'blocked' },
    invalid: { body: { testRunId: 'x', status: 'ok' }, fields: ['body.testRunId', 'body.testCaseId', 'body.status'] },
  },
  {
    path: 'releases',
    writeScope: 'write',
    make: (_, i) => ({ name: `2.3.${i}`, releaseDate: '2026-12-01' }),
    alt: () => ({ name: '3.0.0', status: 'released' }),
    filter: () => 'status=released',
    update: { status: 'in_progress', releaseNotes: 'Export to CSV' },
    invalid: { body: { name: '', releaseDate: 'soon' }, fields: ['body.name', 'body.releaseDate'] },
  },
  {
    path: 'release-plans',
    writeScope: 'write',
    setup: async (req) => ({ requirementId: await created(req, '/requirements', { title: 'planned' }) }),
    make: (ctx, i) => ({ title: `2.3 plan ${i}`, itemIds: [ctx.requirementId], goals: ['ship export'] }),
    alt: () => ({ title: 'Old plan', status: 'cancelled' }),
    filter: () => 'status=cancelled',
    update: { status: 'approved', endDate: '2026-12-20' },
    invalid: { body: { title: 'x', itemIds: ['tc_1'], endDate: 5 }, fields: ['body.itemIds[0]', 'body.endDate'] },
  },
  {
    path: 'milestones',
    writeScope: 'write',
    make: (_, i) => ({ title: `Beta ${i}`, dueDate: '2026-12-24' }),
    alt: () => ({ title: 'GA', status: 'closed' }),
    filter: () => 'status=closed',
    update: { status: 'closed' },
    invalid: { body: { title: 'x', dueDate: '2026-13-45', colour: 'red' }, fields: ['body.dueDate', 'body.colour'] },
  },
  {
    path: 'kb',
    writeScope: 'write',
    make: (_, i) => ({ title: `How to run the tests ${i}`, content: 'npm test' }),
    alt: () => ({ title: 'FAQ', content: 'Answers', status: 'published', category: 'help' }),
    filter: () => 'category=help&status=published',
    update: { status: 'published' },
    invalid: { body: { title: 'x', format: 'doc' }, fields: ['body.content', 'body.format'] },
  },
  {
    path: 'memories',
    writeScope: 'write',
    make: (_, i) => ({ content: `The team prefers small pull requests ${i}` }),
    alt: () => ({ content: 'Deploys happen on Tuesdays', type: 'decision', importance: 5 }),
    filter: () => 'importance=5',
    update: { importance: 4, expiresAt: '2027-01-01T00:00:00Z' },
    invalid: { body: { content: 'x', importance: 9, type: 'rumour' }, fields: ['body.importance', 'body.type'] },
  },
  {
    path: 'notes',
    writeScope: 'write',
    make: (_, i) => ({ content: `Check the logs ${i}` }),
    alt: () => ({ content: 'Pinned note', pinned: true }),
    filter: () => 'pinned=true',
    update: { title: 'Logs' },
    invalid: { body: { content: '', pinned: 'yes' }, fields: ['body.content', 'body.pinned'] },
  },
  {
    path: 'webhooks',
    writeScope: 'admin',
    readScope: 'admin',
    make: (_, i) => ({ url: `https://hooks.example.test/${i}`, events: ['bug.created'], secret: 's'.repeat(24) }),
    alt: () => ({ url: 'https://hooks.example.test/all', events: ['*'], active: false }),
    filter: () => 'active=false',
    update: { events: ['bug.created', 'bug.updated'] },
    invalid: { body: { url: 'ftp://files.test/x', events: [] }, fields: ['body.url', 'body.events'] },
    hidden: ['secret'],
  },
  {
    path: 'platform/projects',
    writeScope: 'admin',
    setup: async (req) => ({ groupId: await created(req, '/platform/groups', { name: 'grouping' }) }),
    make: (_, i) => ({ name: `Web app ${i}` }),
    alt: (ctx) => ({ name: 'Grouped', groupId: ctx.groupId }),
    filter: (ctx) => `groupId=${ctx.groupId}&status=active`,
    update: { description: 'The web front end' },
    invalid: { body: { name: '', groupId: 'abc' }, fields: ['body.name', 'body.groupId'] },
    secretInAnswer: true,
  },
  {
    path: 'platform/groups',
    writeScope: 'admin',
    make: (_, i) => ({ name: `Team ${i}` }),
    alt: () => ({ name: 'Platform team', description: 'infra' }),
    // Groups filter on nothing but the change time: updatedSince selects the newest.
    filter: (ctx) => `updatedSince=${encodeURIComponent(ctx.altUpdatedAt)}`,
    update: { description: 'the first team' },
    invalid: { body: { name: 'x'.repeat(201), extra: true }, fields: ['body.name', 'body.extra'] },
  },
];

/** What a create body should read back as: the fields given (the hidden ones never). */
function expectFields(record: Body, input: Body, hidden: string[] = []) {
  for (const [field, value] of Object.entries(input)) {
    if (hidden.includes(field)) expect(record, field).not.to.have.property(field);
    else expect(record[field], field).to.deep.equal(value);
  }
}

describe('REST resource groups: the same conventions everywhere', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  it('has a fixture for every artifact definition', () => {
    const covered = fixtures.map((f) => f.path);
    for (const def of artifactDefinitions) expect(covered, def.path).to.include(def.path);
  });

  for (const fx of fixtures) {
    describe(fx.path, () => {
      const base = `/${fx.path}`;
      let key: string;
      let req: Req;
      let ctx: Body;
      const ids: string[] = [];

      before(async () => {
        // Each group works in its own project (and key), so that the per-key rate limit never bites.
        ({ key } = await t.newProject('admin'));
        req = (method, path, body, headers) => t.request(method, path, { key, body, headers });
        ctx = (await fx.setup?.(req)) ?? {};
      });

      it('creates a record answered as itself, with id, revision, ETag and Location', async () => {
        const input = fx.make(ctx, 0);
        const res = await req('POST', base, input);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.id).to.be.a('string');
        expect(res.body.version).to.equal(1);
        expect(res.headers.get('etag')).to.equal('"1"');
        expect(res.headers.get('location')).to.equal(`/api/v1${base}/${res.body.id}`);
        expectFields(res.body, input, fx.hidden);
        ids.push(res.body.id);
      });

      it('reads it back with its ETag', async () => {
        const res = await req('GET', `${base}/${ids[0]}`);
        expect(res.status).to.equal(200);
        expect(res.body.id).to.equal(ids[0]);
        expectFields(res.body, fx.make(ctx, 0), fx.hidden);
        expect(res.headers.get('etag')).to.equal(`"${res.body.version}"`);
      });

      it('lists across pages with a cursor, in a stable order, newest first on request', async () => {
        for (const i of [1, 2]) ids.push((await req('POST', base, fx.make(ctx, i))).body.id);
        const seen: string[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: { status: number; body: any } = await req(
            'GET',
            `${base}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          );
          expect(page.status, JSON.stringify(page.body)).to.equal(200);
          expect(page.body.items.length).to.be.at.most(2);
          seen.push(...page.body.items.map((r: Body) => r.id));
          cursor = page.body.nextCursor;
          pages += 1;
        } while (cursor);
        expect(pages).to.be.at.least(2);
        expect(seen.filter((id) => ids.includes(id))).to.deep.equal(ids);
        expect(new Set(seen).size).to.equal(seen.length);
        const newest = await req('GET', `${base}?sort=-createdAt&limit=200`);
        const order = newest.body.items.map((r: Body) => r.id).filter((id: string) => ids.includes(id));
        expect(order).to.deep.equal([...ids].reverse());
      });

      it('filters on the fields people filter by', async () => {
        const alt = await req('POST', base, fx.alt(ctx));
        expect(alt.status, JSON.stringify(alt.body)).to.equal(201);
        ctx.altUpdatedAt = alt.body.updatedAt;
        const res = await req('GET', `${base}?${fx.filter(ctx)}&limit=200`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const found = res.body.items.map((r: Body) => r.id);
        expect(found).to.include(alt.body.id);
        for (const id of ids) expect(found).not.to.include(id);
        await req('DELETE', `${base}/${alt.body.id}`);
      });

      it('updates with If-Match; a stale If-Match is a 412 that changes nothing', async () => {
        const id = ids[0];
        const patched = await req('PATCH', `${base}/${id}`, fx.update, { 'if-match': '"1"' });
        expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
        expect(patched.body.version).to.equal(2);
        expect(patched.headers.get('etag')).to.equal('"2"');
        expectFields(patched.body, fx.update);
        const stale = await req('PATCH', `${base}/${id}`, fx.update, { 'if-match': '"1"' });
        expect(stale.status).to.equal(412);
        expect(stale.body.error.code).to.equal('PRECONDITION_FAILED');
        const after = await req('GET', `${base}/${id}`);
        expect(after.body.version).to.equal(2);
        expectFields(after.body, fx.update);
        // The most recently changed comes first in -updatedAt order, across pages.
        const first = await req('GET', `${base}?sort=-updatedAt&limit=1`);
        expect(first.body.items[0].id).to.equal(id);
        const second = await req('GET', `${base}?sort=-updatedAt&limit=1&cursor=${first.body.nextCursor}`);
        expect(second.status).to.equal(200);
        expect(second.body.items[0].id).not.to.equal(id);
      });

      it('names each bad field of an invalid create, and writes nothing', async () => {
        const before = await req('GET', `${base}?limit=200`);
        const res = await req('POST', base, fx.invalid.body);
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
        for (const field of fx.invalid.fields)
          expect(
            fields.some((f: string) => f.startsWith(field)),
            `${field} in ${fields}`,
          ).to.equal(true);
        const after = await req('GET', `${base}?limit=200`);
        expect(after.body.items.length).to.equal(before.body.items.length);
      });

      it('hides the records from another tenant behind 404s', async () => {
        const other = await t.newProject('admin');
        const as = (method: string, path: string, body?: unknown) => t.request(method, path, { key: other.key, body });
        for (const [method, path, body] of [
          ['GET', `${base}/${ids[0]}`],
          ['PATCH', `${base}/${ids[0]}`, fx.update],
          ['DELETE', `${base}/${ids[0]}`],
        ] as Array<[string, string, unknown?]>) {
          const res = await as(method, path, body);
          expect(res.status, `${method} ${path}`).to.equal(404);
          expect(res.body.error.code).to.equal('NOT_FOUND');
        }
        const list = await as('GET', `${base}?limit=200`);
        for (const id of ids) expect(list.body.items.map((r: Body) => r.id)).not.to.include(id);
        expect((await req('GET', `${base}/${ids[0]}`)).status).to.equal(200);
      });

      if (!fx.path.startsWith('platform/')) {
        it('hides the records from another project of the same tenant too', async () => {
          const sibling = (await req('POST', '/platform/projects', { name: `sibling of ${fx.path}` })).body.adminKey
            .key;
          const res = await t.request('GET', `${base}/${ids[0]}`, { key: sibling });
          expect(res.status).to.equal(404);
          expect((await t.request('PATCH', `${base}/${ids[0]}`, { key: sibling, body: fx.update })).status).to.equal(
            404,
          );
          const list = await t.request('GET', `${base}?limit=200`, { key: sibling });
          expect(list.body.items).to.deep.equal([]);
        });
      }

      it('enforces scopes: a key below the write scope cannot write', async () => {
        const weaker = fx.writeScope === 'admin' ? 'write' : 'read';
        const made = await req('POST', '/api-keys', { scope: weaker, name: weaker });
        const res = await t.request('POST', base, { key: made.body.key, body: fx.make(ctx, 8) });
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('FORBIDDEN');
        const read = await t.request('GET', `${base}/${ids[0]}`, { key: made.body.key });
        expect(read.status).to.equal(fx.readScope === 'admin' ? 403 : 200);
      });

      it('answers a retried create with the same Idempotency-Key with the first answer, never a duplicate', async () => {
        const body = fx.make(ctx, 9);
        const headers = { 'idempotency-key': `create-${fx.path}` };
        const first = await req('POST', base, body, headers);
        expect(first.status, JSON.stringify(first.body)).to.equal(201);
        const again = await req('POST', base, body, headers);
        if (fx.secretInAnswer) {
          // The first answer held a secret shown once: it is not repeated, but nothing is made twice.
          expect(again.status).to.equal(409);
          expect(again.body.error.details.id).to.equal(first.body.id);
        } else {
          expect(again.status).to.equal(201);
          expect(again.body).to.deep.equal(first.body);
          expect(again.headers.get('idempotent-replayed')).to.equal('true');
          expect(again.headers.get('etag')).to.equal(first.headers.get('etag'));
        }
        const list = await req('GET', `${base}?limit=200`);
        expect(list.body.items.filter((r: Body) => r.id === first.body.id)).to.have.length(1);
        const reused = await req('POST', base, fx.make(ctx, 10), headers);
        expect(reused.status).to.equal(422);
        expect(reused.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
        ids.push(first.body.id);
      });

      it('deletes (a stale If-Match first refused), then answers 404', async () => {
        const id = ids[ids.length - 1];
        const stale = await req('DELETE', `${base}/${id}`, undefined, { 'if-match': '"99"' });
        expect(stale.status).to.equal(412);
        const res = await req('DELETE', `${base}/${id}`);
        expect(res.status).to.equal(204);
        expect((await req('GET', `${base}/${id}`)).status).to.equal(404);
        const again = await req('DELETE', `${base}/${id}`);
        expect(again.status).to.equal(404);
        expect(again.body.error.code).to.equal('NOT_FOUND');
      });
    });
  }
});
