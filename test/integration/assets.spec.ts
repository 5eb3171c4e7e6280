// The asset contract, run once per driver against real parts: PostgreSQL, the REST listener over
// HTTP, the fs driver on disk, and for s3 an S3-compatible server (s3rver) that checks signatures.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestService, type TestService } from '../support/service.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { census, download, fetchBytes, postFile, sha256, upload } from '../support/assets.js';
import { TestExecutor } from '../support/executor.js';
import { eventually } from '../support/eventually.js';
import { startService } from '../../src/service.js';
import { createLogger } from '../../src/log.js';
import { StorageDrivers } from '../../src/assets/storage/drivers.js';
import { tierLimits, UPGRADE_URL } from '../../src/tiers.js';
import type { StorageDriverName } from '../../src/config.js';

const MAX_UPLOAD = 256 * 1024;

for (const driver of ['fs', 's3'] as StorageDriverName[]) {
  describe(`Assets contract (${driver} driver)`, () => {
    let t: TestService;
    let s3: TestS3 | undefined;

    before(async () => {
      if (driver === 's3') s3 = await startS3();
      t = await startTestService({
        storage: { defaultDriver: driver, s3: s3?.config, maxUploadBytes: MAX_UPLOAD },
        otp: { stepGraceMs: 100 },
      });
    });
    after(async () => {
      await t?.stop();
      await s3?.stop();
    });

    /** A project of its own, with an admin key, so tests do not see each other's assets. */
    async function project() {
      const { key, projectId, tenantId } = await t.newProject('admin');
      const req = (method: string, path: string, body?: unknown) => t.request(method, path, { key, body });
      const bucket = async (name: string, extra: Record<string, unknown> = {}) => {
        const res = await req('POST', '/assets/buckets', { name, ...extra });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        return res.body;
      };
      return { key, projectId, tenantId, req, bucket };
    }

    /** Asserts that an action stored nothing: no row, no file, no object, no partial file. */
    async function storesNothing(action: () => Promise<void>) {
      const before = await census(t, s3);
      await action();
      expect(await census(t, s3)).to.deep.equal(before);
    }

    describe('buckets', () => {
      it('gives every project the system buckets profil, otp-evidence and _deletion', async () => {
        const p = await project();
        const res = await p.req('GET', '/assets/buckets');
        expect(res.status).to.equal(200);
        expect(res.body.nextCursor).to.equal(null);
        const names = res.body.items.map((b: { name: string }) => b.name);
        expect(names).to.deep.equal(['profil', 'otp-evidence', '_deletion']);
        for (const b of res.body.items) {
          expect(b).to.include({ system: true, driver, projectId: p.projectId });
          expect(b.id).to.match(/^bkt_/);
          expect(b.usage).to.deep.equal({ assets: 0, bytes: 0 });
        }
        expect(res.body.items[0].allowedContentTypes).to.include('image/png');
      });

      it('creates a bucket with its limits, finds it by id or name, and refuses a duplicate name', async () => {
        const p = await project();
        const created = await p.bucket('logos', { maxFileBytes: 1000, allowedContentTypes: ['image/*', 'text/plain'] });
        expect(created).to.include({ name: 'logos', system: false, driver, maxFileBytes: 1000 });
        expect(created.allowedContentTypes).to.deep.equal(['image/*', 'text/plain']);
        expect((await p.req('GET', `/assets/buckets/${created.id}`)).body.name).to.equal('logos');
        expect((await p.req('GET', '/assets/buckets/logos')).body.id).to.equal(created.id);
        const again = await p.req('POST', '/assets/buckets', { name: 'logos' });
        expect(again.status).to.equal(409);
        expect(again.body.error.code).to.equal('CONFLICT');
      });

      it('refuses bad bucket input naming each field', async () => {
        const p = await project();
        const res = await p.req('POST', '/assets/buckets', { name: '_mine', maxFileBytes: 0, driver: 'ftp' });
        expect(res.status).to.equal(400);
        const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
        expect(fields).to.include.members(['body.name', 'body.maxFileBytes', 'body.driver']);
      });

      it('never deletes a system bucket, refuses a bucket with assets, deletes an empty one', async () => {
        const p = await project();
        for (const name of ['profil', 'otp-evidence', '_deletion']) {
          const res = await p.req('DELETE', `/assets/buckets/${name}`);
          expect(res.status).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
        }
        await p.bucket('full');
        expect((await upload(t, 'full', Buffer.from('x'), { key: p.key })).status).to.equal(201);
        const busy = await p.req('DELETE', '/assets/buckets/full');
        expect(busy.status).to.equal(409);
        const empty = await p.bucket('empty');
        expect((await p.req('DELETE', `/assets/buckets/${empty.id}`)).status).to.equal(204);
        expect((await p.req('GET', `/assets/buckets/${empty.id}`)).status).to.equal(404);
      });

      it('answers a bucket\'s revision as ETag and changes or deletes it only at the revision If-Match names', async () => {
        const p = await project();
        const created = await p.req('POST', '/assets/buckets', { name: 'rev' });
        expect(created.body.version).to.equal(1);
        expect(created.headers.get('etag')).to.equal('"1"');
        expect(created.headers.get('location')).to.equal(`/api/v1/assets/buckets/${created.body.id}`);
        expect((await p.req('GET', '/assets/buckets/rev')).headers.get('etag')).to.equal('"1"');
        const changed = await t.request('PATCH', '/assets/buckets/rev', { key: p.key, body: { maxFileBytes: 500 }, headers: { 'if-match': '"1"' } });
        expect(changed.status).to.equal(200);
        expect(changed.body).to.include({ version: 2, maxFileBytes: 500 });
        expect(changed.headers.get('etag')).to.equal('"2"');
        const stale = await t.request('PATCH', '/assets/buckets/rev', { key: p.key, body: { maxFileBytes: 9 }, headers: { 'if-match': '"1"' } });
        expect(stale.status).to.equal(412);
        expect(stale.body.error).to.include({ code: 'PRECONDITION_FAILED' });
        expect(stale.body.error.details).to.include({ currentVersion: 2 });
        const staleDelete = await t.request('DELETE', '/assets/buckets/rev', { key: p.key, headers: { 'if-match': '"1"' } });
        expect(staleDelete.status).to.equal(412);
        expect((await p.req('GET', '/assets/buckets/rev')).body).to.include({ version: 2, maxFileBytes: 500 });
        expect((await t.request('DELETE', '/assets/buckets/rev', { key: p.key, headers: { 'if-match': '"2"' } })).status).to.equal(204);
        expect((await p.req('GET', '/assets/buckets/rev')).status).to.equal(404);
      });
    });

    describe('upload, metadata and signed download', () => {
      it('uploads a file, answers its metadata and serves the same bytes through the signed link', async () => {
        const p = await project();
        await p.bucket('docs');
        const content = randomBytes(100_000);
        const res = await upload(t, 'docs', content, { key: p.key, filename: 'report 2024 é.pdf', type: 'application/pdf' });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        const asset = res.body;
        expect(asset.id).to.match(/^ast_/);
        expect(asset).to.include({
          bucket: 'docs',
          name: 'report 2024 é.pdf',
          size: content.length,
          contentType: 'application/pdf',
          sha256: sha256(content),
          visibility: 'private',
          storageProvider: driver,
          projectId: p.projectId,
          downloadUrl: `/api/v1/assets/items/${asset.id}/download`,
        });
        expect(asset).not.to.have.property('publicUrl');
        expect(Date.parse(asset.createdAt)).to.be.a('number').and.not.NaN;

        const read = await p.req('GET', `/assets/items/${asset.id}`);
        expect(read.status).to.equal(200);
        expect(read.body).to.deep.equal(asset);

        const { redirect, link, file } = await download(t, asset.id, p.key);
        expect(redirect.status).to.equal(302);
        expect(redirect.headers.get('cache-control')).to.equal('no-store');
        const expires = Date.parse(redirect.headers.get('x-link-expires')!);
        expect(expires - Date.now()).to.be.within(880_000, 901_000);
        if (driver === 'fs') expect(link).to.match(new RegExp(`^${t.service.restUrl}/api/v1/assets/signed/${asset.id}\\?exp=\\d+&sig=`));
        else expect(link).to.match(new RegExp(`^${s3!.config.endpoint}/${s3!.config.bucket}/.*${asset.id}\\?.*X-Amz-Expires=900`));
        expect(link).not.to.include(p.key);
        expect(file!.status).to.equal(200);
        expect(sha256(file!.bytes)).to.equal(sha256(content));
        expect(file!.headers.get('content-type')).to.equal('application/pdf');
        expect(file!.headers.get('content-disposition')).to.equal(
          `inline; filename="report 2024 _.pdf"; filename*=UTF-8''report%202024%20%C3%A9.pdf`,
        );
        if (driver === 'fs') {
          expect(file!.headers.get('content-length')).to.equal(String(content.length));
          expect(file!.headers.get('etag')).to.equal(`"${sha256(content)}"`);
          expect(file!.headers.get('x-content-type-options')).to.equal('nosniff');
        }
      });

      it('offers HTML and unknown types as downloads, never inline', async () => {
        const p = await project();
        await p.bucket('web');
        const res = await upload(t, 'web', Buffer.from('<script>alert(1)</script>'), { key: p.key, filename: 'x.html', type: 'text/html' });
        const { file } = await download(t, res.body.id, p.key);
        expect(file!.headers.get('content-disposition')).to.match(/^attachment; filename="x.html"/);
      });

      it('keeps the storage key its own: a client file name never becomes a path', async () => {
        const p = await project();
        await p.bucket('names');
        const res = await upload(t, 'names', Buffer.from('hi'), { key: p.key, filename: '../../../etc/passwd' });
        expect(res.status).to.equal(201);
        expect(res.body.name).to.equal('passwd');
        const row = await t.service.db('assets').where('id', res.body.id).first();
        expect(row.storage_key).to.equal(`${p.tenantId}/${p.projectId}/${res.body.id}`);
      });

      it('lists the assets of a bucket and counts them in the bucket usage', async () => {
        const p = await project();
        await p.bucket('many');
        const ids = [];
        for (const text of ['one', 'two', 'three']) ids.push((await upload(t, 'many', Buffer.from(text), { key: p.key })).body.id);
        const page1 = await p.req('GET', '/assets/buckets/many/assets?limit=2');
        expect(page1.body.items.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(0, 2));
        const page2 = await p.req('GET', `/assets/buckets/many/assets?limit=2&cursor=${page1.body.nextCursor}`);
        expect(page2.body.items.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(2));
        expect((await p.req('GET', '/assets/buckets/many')).body.usage).to.deep.equal({ assets: 3, bytes: 11 });
        expect((await p.req('GET', '/assets/usage')).body).to.include({ tier: 'free', usedBytes: 11, quotaBytes: tierLimits('free').storageBytes });
      });

      it('answers an asset\'s revision as ETag and changes or deletes it only at the revision If-Match names', async () => {
        const p = await project();
        await p.bucket('rev-assets');
        const up = await upload(t, 'rev-assets', Buffer.from('versioned'), { key: p.key });
        expect(up.status).to.equal(201);
        expect(up.body.version).to.equal(1);
        expect(up.headers.get('etag')).to.equal('"1"');
        expect(up.headers.get('location')).to.equal(`/api/v1/assets/items/${up.body.id}`);
        const id = up.body.id;
        expect((await p.req('GET', `/assets/items/${id}`)).headers.get('etag')).to.equal('"1"');
        const opened = await t.request('PATCH', `/assets/items/${id}`, { key: p.key, body: { visibility: 'public' }, headers: { 'if-match': '"1"' } });
        expect(opened.status).to.equal(200);
        expect(opened.body).to.include({ version: 2, visibility: 'public', publicUrl: `/api/v1/assets/public/${id}` });
        expect(opened.headers.get('etag')).to.equal('"2"');
        const stale = await t.request('PATCH', `/assets/items/${id}`, { key: p.key, body: { visibility: 'private' }, headers: { 'if-match': '"1"' } });
        expect(stale.status).to.equal(412);
        expect(stale.body.error.details).to.include({ currentVersion: 2 });
        await storesNothing(async () => {
          const staleDelete = await t.request('DELETE', `/assets/items/${id}`, { key: p.key, headers: { 'if-match': '"1"' } });
          expect(staleDelete.status).to.equal(412);
        });
        expect((await p.req('GET', `/assets/items/${id}`)).body).to.include({ version: 2, visibility: 'public' });
        const deleted = await t.request('DELETE', `/assets/items/${id}`, { key: p.key, headers: { 'if-match': '"2"' } });
        expect(deleted.status).to.equal(200);
        expect(deleted.body.archive).to.include({ bucket: '_deletion', version: 1 });
      });
    });

    describe('public assets', () => {
      it('serves a public asset without a key, and answers 304 to its ETag', async () => {
        const p = await project();
        const content = randomBytes(5000);
        const res = await upload(t, 'profil', content, { key: p.key, filename: 'me.png', type: 'image/png', fields: { visibility: 'public' } });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body).to.include({ visibility: 'public', publicUrl: `/api/v1/assets/public/${res.body.id}` });
        const file = await fetchBytes(`${t.service.restUrl}${res.body.publicUrl}`);
        expect(file.status).to.equal(200);
        expect(sha256(file.bytes)).to.equal(sha256(content));
        expect(file.headers.get('content-type')).to.equal('image/png');
        const again = await fetchBytes(`${t.service.restUrl}${res.body.publicUrl}`, { headers: { 'if-none-match': `"${sha256(content)}"` } });
        expect(again.status).to.equal(304);
        expect(again.bytes.length).to.equal(0);
      });

      it('answers the same 404 for a private asset, a missing one and one made private again', async () => {
        const p = await project();
        await p.bucket('mixed');
        const priv = await upload(t, 'mixed', Buffer.from('secret'), { key: p.key });
        const pub = await upload(t, 'mixed', Buffer.from('open'), { key: p.key, fields: { visibility: 'public' } });
        const get = (id: string) => t.request('GET', `/assets/public/${id}`, { key: null });
        const privRes = await get(priv.body.id);
        const missing = await get('ast_00000000000000000000000000');
        expect(privRes.status).to.equal(404);
        expect(missing.status).to.equal(404);
        const shape = (body: any, id: string) => JSON.stringify(body).replaceAll(id, 'ID');
        expect(shape(privRes.body, priv.body.id)).to.equal(shape(missing.body, 'ast_00000000000000000000000000'));
        expect((await get(pub.body.id)).status).to.equal(200);
        const patched = await p.req('PATCH', `/assets/items/${pub.body.id}`, { visibility: 'private' });
        expect(patched.body.visibility).to.equal('private');
        expect((await get(pub.body.id)).status).to.equal(404);
      });

      it('refuses a visibility other than public or private', async () => {
        const p = await project();
        await p.bucket('vis');
        await storesNothing(async () => {
          const res = await upload(t, 'vis', Buffer.from('x'), { key: p.key, fields: { visibility: 'everyone' } });
          expect(res.status).to.equal(400);
          expect(res.body.error.details.fields[0].field).to.equal('body.visibility');
        });
      });
    });

    describe('signed links', () => {
      async function asset() {
        const p = await project();
        await p.bucket('signed');
        const content = randomBytes(3000);
        const res = await upload(t, 'signed', content, { key: p.key, type: 'text/plain' });
        return { p, id: res.body.id as string, content };
      }

      it('refuses a tampered link with 403 and no file', async () => {
        const { p, id } = await asset();
        const { link } = await download(t, id, p.key);
        const url = new URL(link!);
        const param = driver === 'fs' ? 'sig' : 'X-Amz-Signature';
        const sig = url.searchParams.get(param)!;
        url.searchParams.set(param, (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
        const res = await fetchBytes(url.toString());
        expect(res.status).to.equal(403);
        if (driver === 'fs') {
          expect(JSON.parse(res.text).error).to.include({ code: 'FORBIDDEN' });
          expect(JSON.parse(res.text).error.details).to.deep.equal({ reason: 'invalid' });
        } else {
          expect(res.text).to.include('SignatureDoesNotMatch');
        }
        const longer = new URL(link!);
        const expParam = driver === 'fs' ? 'exp' : 'X-Amz-Expires';
        longer.searchParams.set(expParam, String(Number(longer.searchParams.get(expParam)) + 3600));
        expect((await fetchBytes(longer.toString())).status).to.equal(403);
      });

      it('refuses a link signed for another asset', async () => {
        const a = await asset();
        const b = await asset();
        const { link } = await download(t, a.id, a.p.key);
        const foreign = link!.replace(a.id, b.id);
        const res = await fetchBytes(foreign);
        expect(res.status).to.equal(403);
        expect(sha256(res.bytes)).not.to.equal(sha256(b.content));
      });

      it('refuses an expired link with 403', async () => {
        const { id } = await asset();
        // A link signed 16 minutes ago, with the service's own keys, as if kept since then.
        const drivers = await StorageDrivers.create(t.service.config, t.service.db);
        const row = await t.service.db('assets').where('id', id).first();
        const link = await drivers.get(driver).signedUrl(
          { assetId: id, key: row.storage_key, name: row.name, contentType: row.content_type },
          { origin: t.service.restUrl, expiresInSec: 900, now: new Date(Date.now() - 16 * 60_000) },
        );
        drivers.stop();
        const res = await fetchBytes(link);
        expect(res.status).to.equal(403);
        if (driver === 'fs') expect(JSON.parse(res.text).error.details).to.deep.equal({ reason: 'expired' });
        else expect(res.text).to.include('Request has expired');
      });
    });

    describe('isolation', () => {
      it('shows another project nothing: metadata, links, changes, buckets and uploads are 404', async () => {
        const owner = await project();
        const other = await project();
        const bucket = await owner.bucket('private-stuff');
        const res = await upload(t, 'private-stuff', Buffer.from('mine'), { key: owner.key });
        const id = res.body.id;
        for (const [method, path, body] of [
          ['GET', `/assets/items/${id}`],
          ['GET', `/assets/items/${id}/download`],
          ['PATCH', `/assets/items/${id}`, { visibility: 'public' }],
          ['DELETE', `/assets/items/${id}`],
          ['GET', `/assets/buckets/${bucket.id}`],
          ['GET', `/assets/buckets/${bucket.id}/assets`],
          ['PATCH', `/assets/buckets/${bucket.id}`, { maxFileBytes: 5 }],
          ['DELETE', `/assets/buckets/${bucket.id}`],
        ] as Array<[string, string, unknown?]>) {
          const answer = await other.req(method, path, body);
          expect(answer.status, `${method} ${path}`).to.equal(404);
          expect(answer.body.error.code).to.equal('NOT_FOUND');
        }
        await storesNothing(async () => {
          expect((await upload(t, bucket.id, Buffer.from('intruder'), { key: other.key })).status).to.equal(404);
        });
        const listed = await other.req('GET', '/assets/buckets');
        expect(listed.body.items.map((b: { id: string }) => b.id)).not.to.include(bucket.id);
        expect((await owner.req('GET', `/assets/items/${id}`)).body.visibility).to.equal('private');
      });

      it('needs a key for everything but public reads and signed links, and write scope to change', async () => {
        const p = await project();
        await p.bucket('scoped');
        expect((await t.request('GET', '/assets/buckets', { key: null })).status).to.equal(401);
        await storesNothing(async () => {
          const res = await fetch(`${t.api}/assets/buckets/scoped/assets`, { method: 'POST', body: new FormData() });
          expect(res.status).to.equal(401);
        });
        const { key: readKey } = await t.newProject('read');
        const res = await upload(t, 'profil', Buffer.from('x'), { key: readKey, type: 'image/png' });
        expect(res.status).to.equal(403);
      });
    });

    describe('deletion', () => {
      it('archives a copy in _deletion (who, when, from where) before removing the asset', async () => {
        const p = await project();
        await p.bucket('temp');
        const content = randomBytes(4096);
        const res = await upload(t, 'temp', content, { key: p.key, filename: 'old.bin', fields: { visibility: 'public' } });
        const id = res.body.id;
        const original = await t.service.db('assets').where('id', id).first();
        const deleted = await p.req('DELETE', `/assets/items/${id}`);
        expect(deleted.status).to.equal(200);
        expect(deleted.body).to.include({ id, deleted: true });
        const archive = deleted.body.archive;
        expect(archive).to.include({ bucket: '_deletion', name: 'old.bin', size: 4096, sha256: sha256(content), visibility: 'private', storageProvider: driver });
        expect(archive.id).to.match(/^ast_/).and.not.equal(id);
        const keyId = (await t.service.db('api_keys').where('project_id', p.projectId).first('id')).id;
        expect(archive.archivedFrom).to.include({ assetId: id, bucket: 'temp', bucketId: res.body.bucketId, visibility: 'public', deletedBy: keyId, createdBy: keyId });
        expect(Math.abs(Date.parse(archive.archivedFrom.deletedAt) - Date.now())).to.be.below(60_000);

        expect((await p.req('GET', `/assets/items/${id}`)).status).to.equal(404);
        expect((await t.request('GET', `/assets/public/${id}`, { key: null })).status).to.equal(404);
        const listed = await p.req('GET', '/assets/buckets/_deletion/assets');
        expect(listed.body.items.map((a: { id: string }) => a.id)).to.deep.equal([archive.id]);
        const { file } = await download(t, archive.id, p.key);
        expect(sha256(file!.bytes)).to.equal(sha256(content));
        // The original object is gone from storage; only the archive copy remains.
        const where = await census(t, s3);
        const stored = [...where.files, ...where.objects].join('\n');
        expect(stored).not.to.include(original.storage_key.split('/').pop());
        expect(stored).to.include(archive.id);

        const purged = await p.req('DELETE', `/assets/items/${archive.id}`);
        expect(purged.body).to.deep.equal({ id: archive.id, deleted: true, archive: null });
        const after = await census(t, s3);
        expect([...after.files, ...after.objects].join('\n')).not.to.include(archive.id);
        expect((await p.req('GET', '/assets/buckets/_deletion/assets')).body.items).to.deep.equal([]);
      });

      it('does not count _deletion against the quota', async () => {
        const p = await project();
        await p.bucket('q');
        const res = await upload(t, 'q', randomBytes(1000), { key: p.key });
        expect((await p.req('GET', '/assets/usage')).body.usedBytes).to.equal(1000);
        await p.req('DELETE', `/assets/items/${res.body.id}`);
        expect((await p.req('GET', '/assets/usage')).body.usedBytes).to.equal(0);
      });

      it('shows the storage quota and what the project keeps in /platform/entitlement', async () => {
        const p = await project();
        await p.bucket('counted');
        const before = await p.req('GET', '/platform/entitlement');
        expect(before.status).to.equal(200);
        expect(before.body.limits.storageBytes).to.equal(tierLimits('free').storageBytes);
        expect(before.body.usage.storageBytes).to.equal(0);
        const first = await upload(t, 'counted', randomBytes(1500), { key: p.key });
        expect(first.status).to.equal(201);
        await upload(t, 'profil', randomBytes(700), { key: p.key, type: 'image/png' });
        const after = await p.req('GET', '/platform/entitlement');
        expect(after.body.usage.storageBytes).to.equal(2200);
        expect(after.body.usage.storageBytes).to.equal((await p.req('GET', '/assets/usage')).body.usedBytes);
        // Another project's files are not counted, nor the _deletion copy of a deleted one.
        const other = await project();
        await upload(t, 'profil', randomBytes(300), { key: other.key, type: 'image/png' });
        await p.req('DELETE', `/assets/items/${first.body.id}`);
        expect((await p.req('GET', '/platform/entitlement')).body.usage.storageBytes).to.equal(700);
      });

      it('takes no direct uploads into _deletion or otp-evidence', async () => {
        const p = await project();
        for (const name of ['_deletion', 'otp-evidence']) {
          await storesNothing(async () => {
            const res = await upload(t, name, Buffer.from('x'), { key: p.key });
            expect(res.status).to.equal(403);
            expect(res.body.error.code).to.equal('FORBIDDEN');
          });
        }
      });
    });

    describe('limits and quota leave nothing behind', () => {
      it('answers 413 for a file over the service limit, by Content-Length and while streaming', async () => {
        const p = await project();
        await p.bucket('big');
        await storesNothing(async () => {
          const res = await upload(t, 'big', randomBytes(MAX_UPLOAD + 100 * 1024), { key: p.key });
          expect(res.status).to.equal(413);
          expect(res.body.error).to.include({ code: 'PAYLOAD_TOO_LARGE' });
          expect(res.body.error.details).to.deep.equal({ limitBytes: MAX_UPLOAD });
        });
        await storesNothing(async () => {
          // One byte over, within the form's allowance: refused while it streams.
          const res = await upload(t, 'big', randomBytes(MAX_UPLOAD + 1), { key: p.key });
          expect(res.status).to.equal(413);
        });
        await storesNothing(async () => {
          const res = await upload(t, 'big', randomBytes(MAX_UPLOAD + 50_000), { key: p.key, chunked: true });
          expect(res.status).to.equal(413);
        });
        const exact = await upload(t, 'big', randomBytes(MAX_UPLOAD), { key: p.key, chunked: true });
        expect(exact.status).to.equal(201);
        expect(exact.body.size).to.equal(MAX_UPLOAD);
      });

      it('keeps to a bucket\'s own size limit and content types', async () => {
        const p = await project();
        await p.bucket('small', { maxFileBytes: 100, allowedContentTypes: ['image/*'] });
        await storesNothing(async () => {
          const res = await upload(t, 'small', randomBytes(101), { key: p.key, type: 'image/png' });
          expect(res.status).to.equal(413);
          expect(res.body.error.message).to.include('bucket "small"');
        });
        await storesNothing(async () => {
          const res = await upload(t, 'small', randomBytes(10), { key: p.key, type: 'text/html' });
          expect(res.status).to.equal(415);
          expect(res.body.error.details).to.deep.equal({ contentType: 'text/html', allowedContentTypes: ['image/*'] });
        });
        expect((await upload(t, 'small', randomBytes(100), { key: p.key, type: 'image/webp' })).status).to.equal(201);
      });

      it('answers 402 QUOTA_EXCEEDED with upgradeUrl when the tier\'s storage is used up', async () => {
        const p = await project();
        const bucket = await p.bucket('quota');
        // The project already holds its quota but for 1000 bytes (a row standing for earlier uploads).
        const quota = tierLimits('free').storageBytes;
        await t.service.db('assets').insert({
          id: 'ast_fixture_' + p.projectId.slice(4), tenant_id: p.tenantId, project_id: p.projectId, bucket_id: bucket.id,
          name: 'earlier', size: quota - 1000, content_type: 'application/octet-stream', sha256: '0'.repeat(64),
          storage_provider: driver, storage_key: `${p.tenantId}/${p.projectId}/earlier`,
        });
        await storesNothing(async () => {
          // Refused by its Content-Length before it is read.
          const res = await upload(t, 'quota', randomBytes(200 * 1024), { key: p.key });
          expect(res.status).to.equal(402);
          expect(res.body.error.code).to.equal('QUOTA_EXCEEDED');
          expect(res.body.upgradeUrl).to.equal(UPGRADE_URL);
          expect(res.body.error.details).to.include({ tier: 'free', quotaBytes: quota, usedBytes: quota - 1000 });
        });
        await storesNothing(async () => {
          // Refused while it streams.
          const res = await upload(t, 'quota', randomBytes(1001), { key: p.key, chunked: true });
          expect(res.status).to.equal(402);
          expect(res.body.upgradeUrl).to.equal(UPGRADE_URL);
        });
        // Two uploads that each fit but not together: the project lock lets exactly one in.
        const [a, b] = await Promise.all([
          upload(t, 'quota', randomBytes(600), { key: p.key }),
          upload(t, 'quota', randomBytes(600), { key: p.key }),
        ]);
        expect([a.status, b.status].sort()).to.deep.equal([201, 402]);
        const rows = await t.service.db('assets').where('project_id', p.projectId);
        expect(rows.map((r) => Number(r.size)).sort((x, y) => x - y)).to.deep.equal([600, quota - 1000]);
        const accepted = [a, b].find((r) => r.status === 201)!;
        const refused = [a, b].find((r) => r.status === 402)!;
        expect(refused.body.error.details.uploadBytes).to.equal(600);
        // What is stored for the project is the accepted file only: the refused one was removed.
        const stored = await census(t, s3);
        const mine = [...stored.files, ...stored.objects].filter((f) => f.includes(p.projectId));
        expect(mine).not.to.be.empty;
        for (const f of mine) expect(f).to.include(accepted.body.id);
        await t.service.db('assets').where('project_id', p.projectId).delete();
      });

      it('refuses malformed forms with a clear error and keeps nothing', async () => {
        const p = await project();
        await p.bucket('forms');
        await storesNothing(async () => {
          const res = await p.req('POST', '/assets/buckets/forms/assets', { name: 'not a form' });
          expect(res.status).to.equal(415);
          expect(res.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
        });
        await storesNothing(async () => {
          const form = new FormData();
          form.append('visibility', 'public');
          const res = await fetch(`${t.api}/assets/buckets/forms/assets`, { method: 'POST', headers: { authorization: `Bearer ${p.key}` }, body: form });
          expect(res.status).to.equal(400);
          expect((await res.json()).error.details.fields).to.deep.equal([{ field: 'body.file', message: 'required' }]);
        });
        await storesNothing(async () => {
          const res = await upload(t, 'forms', Buffer.from('x'), { key: p.key, fields: { colour: 'red' } });
          expect(res.status).to.equal(400);
          expect(res.body.error.message).to.include('colour');
        });
        await storesNothing(async () => {
          // A form cut off in the middle of its file.
          const boundary = 'XyZ';
          const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${'a'.repeat(5000)}`;
          const res = await fetch(`${t.api}/assets/buckets/forms/assets`, {
            method: 'POST',
            headers: { authorization: `Bearer ${p.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
            body,
          });
          expect(res.status).to.equal(400);
          expect((await res.json()).error.message).to.match(/Malformed multipart body/);
        });
      });
    });

    describe('OTP evidence', () => {
      const locator = { by: 'role', value: 'button', name: 'Go' };

      async function runWithExecutor(p: Awaited<ReturnType<typeof project>>) {
        const tc = await p.req('POST', '/tests/cases', {
          title: 'with evidence',
          steps: [{ otp: { action: 'click', locator } }, { otp: { action: 'screenshot', fullPage: true } }, { otp: { action: 'hover', locator } }],
        });
        const executor = await TestExecutor.connect(t.otpUrl, { key: p.key });
        await executor.hello({ screenshot: true });
        const created = await p.req('POST', '/otp/runs', { testCaseIds: [tc.body.id] });
        const runId = created.body.runId as string;
        return { executor, runId };
      }

      it('stores evidence for a run step and links it from the run, with a working download', async () => {
        const p = await project();
        const { executor, runId } = await runWithExecutor(p);
        const exec0 = await executor.next('step.exec');
        executor.result(exec0, 'pass');
        const exec1 = await executor.next('step.exec');
        const shot = randomBytes(20_000);
        const stored = await postFile(t, '/otp/evidence', shot, {
          key: p.key, filename: 'step1.png', type: 'image/png', fields: { runId, stepIndex: '1', kind: 'screenshot' },
        });
        expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
        expect(stored.body.assetId).to.match(/^ast_/);
        expect(stored.body).to.include({ runId, stepIndex: 1, kind: 'screenshot', sha256: sha256(shot), size: shot.length });
        const meta = await p.req('GET', `/assets/items/${stored.body.assetId}`);
        expect(meta.body).to.include({ bucket: 'otp-evidence', storageProvider: driver });
        expect(meta.body.evidence).to.deep.equal({ runId, stepIndex: 1, kind: 'screenshot' });

        executor.result(exec1, 'pass', { evidence: { screenshotAssetId: stored.body.assetId, consoleErrors: [] } });
        const exec2 = await executor.next('step.exec');
        executor.result(exec2, 'pass');
        await executor.next('run.finished');

        const run = await p.req('GET', `/otp/runs/${runId}`);
        const evidence = run.body.steps[1].evidence;
        expect(evidence).to.deep.include({
          screenshotAssetId: stored.body.assetId,
          consoleErrors: [],
          screenshotUrl: `/api/v1/assets/items/${stored.body.assetId}/download`,
        });
        expect(evidence.files).to.deep.equal([
          { assetId: stored.body.assetId, kind: 'screenshot', name: 'step1.png', contentType: 'image/png', size: shot.length, downloadUrl: `/api/v1/assets/items/${stored.body.assetId}/download` },
        ]);
        expect(run.body.steps[0].evidence).to.equal(null);
        const redirect = await t.request('GET', evidence.screenshotUrl.replace('/api/v1', ''), { key: p.key });
        expect(redirect.status).to.equal(302);
        const file = await fetchBytes(redirect.headers.get('location')!);
        expect(sha256(file.bytes)).to.equal(sha256(shot));
        executor.close();
      });

      it('a finished run (served from memory) shows evidence added or deleted later: at once here, soon in another process', async () => {
        const p = await project();
        const { executor, runId } = await runWithExecutor(p);
        for (let i = 0; i < 3; i++) executor.result(await executor.next('step.exec'), 'pass');
        await executor.next('run.finished');
        executor.close();
        const files = (run: { body: { steps: Array<{ evidence: { files?: unknown[] } | null }> } }) => run.body.steps[0]!.evidence?.files ?? [];
        // Read twice: the second read is served from the finished-run cache.
        expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
        expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
        const second = await startService({ ...t.service.config, port: 0, wsPort: 0 }, createLogger('silent'));
        try {
          const atSecond = async () => {
            const res = await fetch(`${second.restUrl}/api/v1/otp/runs/${runId}`, { headers: { authorization: `Bearer ${p.key}` } });
            expect(res.status).to.equal(200);
            return { body: await res.json() };
          };
          expect(files(await atSecond())).to.deep.equal([]);

          const stored = await postFile(t, '/otp/evidence', Buffer.from('after the run'), {
            key: p.key, filename: 'late.png', type: 'image/png', fields: { runId, stepIndex: '0', kind: 'screenshot' },
          });
          expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
          // This process knows at once; the other hears it from the database.
          expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.have.length(1);
          await eventually(async () => expect(files(await atSecond())).to.have.length(1));

          // A key of another project never gets the cached run.
          const stranger = await project();
          expect((await stranger.req('GET', `/otp/runs/${runId}`)).status).to.equal(404);

          expect((await p.req('DELETE', `/assets/items/${stored.body.assetId}`)).status).to.equal(200);
          expect(files(await p.req('GET', `/otp/runs/${runId}`))).to.deep.equal([]);
          await eventually(async () => expect(files(await atSecond())).to.deep.equal([]));
        } finally {
          await second.stop();
        }
      });

      it('a process whose notice connection was cut listens again and forgets the runs it may have missed news of', async () => {
        const p = await project();
        const { executor, runId } = await runWithExecutor(p);
        for (let i = 0; i < 3; i++) executor.result(await executor.next('step.exec'), 'pass');
        await executor.next('run.finished');
        executor.close();
        const second = await startService({ ...t.service.config, port: 0, wsPort: 0 }, createLogger('silent'));
        try {
          const filesAtSecond = async () => {
            const res = await fetch(`${second.restUrl}/api/v1/otp/runs/${runId}`, { headers: { authorization: `Bearer ${p.key}` } });
            expect(res.status).to.equal(200);
            return ((await res.json()).steps[0].evidence?.files ?? []) as unknown[];
          };
          expect(await filesAtSecond()).to.deep.equal([]); // now held in the second process's memory
          const listenerOf = async () =>
            (await t.service.db.raw(`SELECT pid FROM pg_stat_activity WHERE application_name = ? AND query ILIKE 'LISTEN%'`, [`otp-notices ${second.instanceId}`])).rows as Array<{ pid: number }>;
          const [cut] = await listenerOf();
          expect(cut, 'the second process listens on its own connection').to.not.equal(undefined);
          await t.service.db.raw('SELECT pg_terminate_backend(?)', [cut!.pid]);
          // The change is made while the second process is deaf to it.
          const stored = await postFile(t, '/otp/evidence', Buffer.from('while deaf'), {
            key: p.key, filename: 'deaf.png', type: 'image/png', fields: { runId, stepIndex: '0', kind: 'screenshot' },
          });
          expect(stored.status).to.equal(201);
          await eventually(async () => {
            const [now] = await listenerOf();
            expect(now?.pid).to.be.a('number').and.not.equal(cut!.pid);
          });
          await eventually(async () => expect(await filesAtSecond()).to.have.length(1));
          // And it hears the next change as it happens.
          expect((await p.req('DELETE', `/assets/items/${stored.body.assetId}`)).status).to.equal(200);
          await eventually(async () => expect(await filesAtSecond()).to.deep.equal([]));
        } finally {
          await second.stop();
        }
      });

      it('records a step.result pointing at evidence of another run or project without the reference, with a note', async () => {
        const p = await project();
        const stranger = await project();
        const strangerRun = await runWithExecutor(stranger);
        const strangerShot = await postFile(t, '/otp/evidence', Buffer.from('theirs'), {
          key: stranger.key, fields: { runId: strangerRun.runId, stepIndex: '0', kind: 'screenshot' },
        });
        expect(strangerShot.status).to.equal(201);
        await p.bucket('plain');
        const plain = await upload(t, 'plain', Buffer.from('not evidence'), { key: p.key });
        const other = await runWithExecutor(p);
        const otherShot = await postFile(t, '/otp/evidence', Buffer.from('other run'), {
          key: p.key, fields: { runId: other.runId, stepIndex: '0', kind: 'screenshot' },
        });
        other.executor.close();
        await eventually(async () => expect((await p.req('GET', `/otp/runs/${other.runId}`)).body.status).to.equal('error'));

        const { executor, runId } = await runWithExecutor(p);
        const foreignIds = [strangerShot.body.assetId, plain.body.id, otherShot.body.assetId];
        for (const assetId of foreignIds) {
          const exec = await executor.next('step.exec');
          executor.result(exec, 'pass', { evidence: { screenshotAssetId: assetId } });
        }
        await executor.next('run.finished');
        const run = await p.req('GET', `/otp/runs/${runId}`);
        run.body.steps.forEach((step: any, i: number) => {
          expect(step.status).to.equal('pass');
          expect(step.evidence).not.to.have.property('screenshotAssetId');
          expect(step.evidence).not.to.have.property('screenshotUrl');
          expect(step.evidence.note).to.include(foreignIds[i]).and.include('not evidence uploaded for this run');
        });
        executor.close();
        strangerRun.executor.close();
      });

      it('refuses evidence for a run of another project (404) or a step the run does not have (400), keeping nothing', async () => {
        const p = await project();
        const stranger = await project();
        const { executor, runId } = await runWithExecutor(stranger);
        await storesNothing(async () => {
          const res = await postFile(t, '/otp/evidence', Buffer.from('x'), { key: p.key, fields: { runId, stepIndex: '0', kind: 'screenshot' } });
          expect(res.status).to.equal(404);
          expect(res.body.error.code).to.equal('NOT_FOUND');
        });
        await storesNothing(async () => {
          const res = await postFile(t, '/otp/evidence', Buffer.from('x'), { key: stranger.key, fields: { runId, stepIndex: '3', kind: 'screenshot' } });
          expect(res.status).to.equal(400);
          expect(res.body.error.details.fields).to.deep.equal([{ field: 'body.stepIndex', message: 'must be below 3' }]);
        });
        await storesNothing(async () => {
          const res = await postFile(t, '/otp/evidence', Buffer.from('x'), { key: stranger.key, fields: { runId, kind: 'photo' } });
          expect(res.status).to.equal(400);
          const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
          expect(fields).to.include.members(['body.stepIndex', 'body.kind']);
        });
        executor.close();
      });
    });
  });
}
