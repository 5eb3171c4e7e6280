import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

const navigate = { otp: { action: 'navigate', url: 'https://example.test/login' } };
const click = { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Sign in' } } };

describe('REST: keys, context, test cases and plans', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(async () => t?.stop());

  describe('authentication and scopes', () => {
    it('refuses a request without a key with 401 and the error body', async () => {
      const res = await t.request('GET', '/platform/context', { key: null });
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHORIZED');
      expect(res.body.error.message).to.be.a('string').and.not.empty;
      expect(res.body.error.details).to.deep.equal({});
    });

    it('refuses an unknown key with 401', async () => {
      const res = await t.request('GET', '/platform/context', { key: 'svc_pk_not_a_real_key_0000000000000000000000' });
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHORIZED');
    });

    it('answers the context of the key', async () => {
      const res = await t.request('GET', '/platform/context');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ tenantId: 'ten_default', projectId: 'prj_default', scope: 'admin' });
    });

    it('refuses a read key that tries to write with 403', async () => {
      const readKey = await t.newKey('read');
      const res = await t.request('POST', '/tests/cases', { key: readKey, body: { title: 'x', steps: [] } });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
      const read = await t.request('GET', '/tests/cases', { key: readKey });
      expect(read.status).to.equal(200);
    });

    it('refuses a write key that tries to manage keys with 403', async () => {
      const writeKey = await t.newKey('write');
      const res = await t.request('POST', '/api-keys', { key: writeKey, body: { scope: 'read', name: 'x' } });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
    });

    it('answers 404 with the error body for an unknown route', async () => {
      const res = await t.request('GET', '/no/such/thing');
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
    });

    it('answers 400 VALIDATION_ERROR for malformed JSON', async () => {
      const res = await t.request('POST', '/tests/cases', { body: '{"title": ' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    });
  });

  describe('API keys', () => {
    it('creates a key whose secret is shown once and stored only as a hash', async () => {
      const created = await t.request('POST', '/api-keys', { body: { scope: 'write', name: 'ci runner' } });
      expect(created.status).to.equal(201);
      expect(created.body.key).to.match(/^svc_pk_[A-Za-z0-9_-]{32,}$/);
      expect(created.body).to.include({ scope: 'write', name: 'ci runner', projectId: 'prj_default' });
      const row = await t.service.db('api_keys').where('id', created.body.id).first();
      expect(JSON.stringify(row)).not.to.contain(created.body.key);
      const list = await t.request('GET', '/api-keys');
      const listed = list.body.items.find((k: { id: string }) => k.id === created.body.id);
      expect(listed).to.include({ scope: 'write', name: 'ci runner' });
      expect(listed).not.to.have.property('key');
      const ctx = await t.request('GET', '/platform/context', { key: created.body.key });
      expect(ctx.body.scope).to.equal('write');
    });

    it('revokes a key so that it stops working at once', async () => {
      const created = await t.request('POST', '/api-keys', { body: { scope: 'read', name: 'short-lived' } });
      expect((await t.request('GET', '/platform/context', { key: created.body.key })).status).to.equal(200);
      const revoked = await t.request('DELETE', `/api-keys/${created.body.id}`);
      expect(revoked.status).to.equal(200);
      expect(revoked.body.revokedAt).to.be.a('string');
      expect((await t.request('GET', '/platform/context', { key: created.body.key })).status).to.equal(401);
    });

    it('rejects a bad scope naming the field', async () => {
      const res = await t.request('POST', '/api-keys', { body: { scope: 'root', name: 'x' } });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).to.include('body.scope');
    });

    it('writes the bootstrap key file only when it minted the key', async () => {
      // This suite gave SVC_BOOTSTRAP_KEY, so nothing was minted or written.
      expect(t.service.bootstrap.minted).to.equal(undefined);
      const exists = await fs.stat(path.join(t.service.config.dataDir, 'bootstrap-key')).then(
        () => true,
        () => false,
      );
      expect(exists).to.equal(false);
    });
  });

  describe('test cases', () => {
    it('creates, reads, lists and patches a test case', async () => {
      const created = await t.request('POST', '/tests/cases', {
        body: { title: 'Login works', steps: [navigate, click] },
      });
      expect(created.status).to.equal(201);
      expect(created.body.id).to.match(/^tc_/);
      expect(created.body.steps).to.deep.equal([navigate, click]);
      const read = await t.request('GET', `/tests/cases/${created.body.id}`);
      expect(read.body).to.deep.include({ title: 'Login works', version: 1 });
      const patched = await t.request('PATCH', `/tests/cases/${created.body.id}`, {
        body: { title: 'Login still works' },
      });
      expect(patched.status).to.equal(200);
      expect(patched.body).to.deep.include({ title: 'Login still works', version: 2 });
      expect(patched.body.steps).to.deep.equal([navigate, click]);
    });

    it('pages through test cases with a cursor, in creation order', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await t.request('POST', '/tests/cases', { body: { title: `paged ${i}`, steps: [] } })).body.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { items: Array<{ id: string }>; nextCursor: string | null } } = await t.request(
          'GET',
          `/tests/cases?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(page.body.items.length).to.be.at.most(2);
        seen.push(...page.body.items.map((c) => c.id));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen.filter((id) => ids.includes(id))).to.deep.equal(ids);
      expect(new Set(seen).size).to.equal(seen.length);
    });

    it('names each bad field of an invalid step', async () => {
      const res = await t.request('POST', '/tests/cases', {
        body: {
          title: 'bad',
          steps: [
            navigate,
            { otp: { action: 'clik', locator: { by: 'css', value: '#a' } } },
            { otp: { action: 'click', locator: { by: 'nope', value: 'x' } } },
          ],
        },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
      expect(fields.some((f: string) => f.startsWith('body.steps[1]'))).to.equal(true);
      expect(fields.some((f: string) => f.startsWith('body.steps[2]'))).to.equal(true);
      expect(fields.some((f: string) => f.startsWith('body.steps[0]'))).to.equal(false);
    });

    it('refuses a step nested too deeply to validate with 400, and keeps serving', async () => {
      const depth = 30_000;
      const locator = `${'{"by":"css","value":"a","within":'.repeat(depth)}{"by":"css","value":"a"}${'}'.repeat(depth)}`;
      const res = await t.request('POST', '/tests/cases', {
        body: `{"title":"deep","steps":[{"otp":{"action":"click","locator":${locator}}}]}`,
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.include({
        code: 'VALIDATION_ERROR',
        message: 'The request nests too deeply to be checked',
      });
      expect((await t.request('GET', '/platform/context')).status).to.equal(200);
    });

    it('accepts locators with within, frame, nth and candidates', async () => {
      const step = {
        otp: {
          action: 'click',
          locator: {
            candidates: [
              { by: 'testid', value: 'save' },
              {
                by: 'role',
                value: 'button',
                name: 'Save',
                exact: true,
                nth: 1,
                within: { by: 'css', value: 'form#profile' },
                frame: 'iframe#app',
              },
            ],
          },
        },
        label: 'Save the profile',
        timeoutMs: 5000,
        continueOnFail: true,
        evidence: 'onFail',
      };
      const res = await t.request('POST', '/tests/cases', { body: { title: 'locators', steps: [step] } });
      expect(res.status).to.equal(201);
      expect(res.body.steps[0]).to.deep.equal(step);
    });

    it("hides another project's test case behind a 404", async () => {
      const mine = await t.request('POST', '/tests/cases', { body: { title: 'private', steps: [] } });
      const other = await t.newProject('admin');
      const res = await t.request('GET', `/tests/cases/${mine.body.id}`, { key: other.key });
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
      const list = await t.request('GET', '/tests/cases', { key: other.key });
      expect(list.body.items).to.deep.equal([]);
      const patch = await t.request('PATCH', `/tests/cases/${mine.body.id}`, {
        key: other.key,
        body: { title: 'mine now' },
      });
      expect(patch.status).to.equal(404);
    });
  });

  describe('test plans', () => {
    it('keeps an ordered list of test cases and refuses unknown ones by field', async () => {
      const a = (await t.request('POST', '/tests/cases', { body: { title: 'a', steps: [] } })).body.id;
      const b = (await t.request('POST', '/tests/cases', { body: { title: 'b', steps: [] } })).body.id;
      const plan = await t.request('POST', '/tests/plans', { body: { title: 'smoke', testCaseIds: [b, a] } });
      expect(plan.status).to.equal(201);
      expect(plan.body.testCaseIds).to.deep.equal([b, a]);
      const bad = await t.request('POST', '/tests/plans', { body: { title: 'bad', testCaseIds: [a, 'tc_missing'] } });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.fields).to.deep.equal([
        { field: 'body.testCaseIds[1]', message: 'test case tc_missing not found in this project' },
      ]);
      const patched = await t.request('PATCH', `/tests/plans/${plan.body.id}`, { body: { testCaseIds: [a] } });
      expect(patched.body.testCaseIds).to.deep.equal([a]);
    });
  });

  describe('run limits', () => {
    it('refuses a run of more than 500 steps with 400 VALIDATION_ERROR before anything starts', async () => {
      const steps = Array.from({ length: 300 }, () => click);
      const a = (await t.request('POST', '/tests/cases', { body: { title: 'big a', steps } })).body.id;
      const b = (await t.request('POST', '/tests/cases', { body: { title: 'big b', steps } })).body.id;
      const before = await t.service.db('otp_runs').count({ n: '*' }).first();
      const res = await t.request('POST', '/otp/runs', { body: { testCaseIds: [a, b] } });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.message).to.contain('600');
      const after = await t.service.db('otp_runs').count({ n: '*' }).first();
      expect(after?.n).to.equal(before?.n);
    });

    it('refuses a run whose steps use a variable without a value', async () => {
      const id = (
        await t.request('POST', '/tests/cases', {
          body: {
            title: 'vars',
            steps: [{ otp: { action: 'type', locator: { by: 'label', value: 'Email' }, text: '{{email}}' } }],
          },
        })
      ).body.id;
      const res = await t.request('POST', '/otp/runs', { body: { testCaseIds: [id] } });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.fields).to.deep.equal([
        { field: 'body.vars.email', message: 'the steps use {{email}}; give it a value' },
      ]);
    });

    it('answers 404 for a run of another project and for unknown runs', async () => {
      const other = await t.newProject('admin');
      expect((await t.request('GET', '/otp/runs/otr_nope')).status).to.equal(404);
      const id = (await t.request('POST', '/tests/cases', { body: { title: 'queued', steps: [click] } })).body.id;
      const run = await t.request('POST', '/otp/runs', { body: { testCaseIds: [id] } });
      expect(run.status).to.equal(202);
      const foreign = await t.request('GET', `/otp/runs/${run.body.runId}`, { key: other.key });
      expect(foreign.status).to.equal(404);
      const cancelForeign = await t.request('POST', `/otp/runs/${run.body.runId}/cancel`, { key: other.key });
      expect(cancelForeign.status).to.equal(404);
    });

    it('serves the protocol description without a key', async () => {
      const res = await t.request('GET', '/otp/protocol', { key: null });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ version: '1.0', keepaliveSec: 25, maxSteps: 500, stepTimeoutMs: 30000 });
      // Where to connect, for a client that knows only the REST address (the browser extension).
      expect(res.body.otpUrl).to.equal(t.otpUrl);
    });
  });
});
