// The asset contract (test/support/assets-contract.ts): buckets, uploads, public assets and signed links.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { StorageDrivers } from '../../src/assets/storage/drivers.js';
import { tierLimits } from '../../src/tiers.js';
import { download, fetchBytes, sha256, upload } from '../support/assets.js';
import { describeAssetsContract } from '../support/assets-contract.js';

describeAssetsContract('buckets, uploads, public assets and signed links', (c) => {
  const { driver, project, storesNothing } = c;

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
      expect((await upload(c.t, 'full', Buffer.from('x'), { key: p.key })).status).to.equal(201);
      const busy = await p.req('DELETE', '/assets/buckets/full');
      expect(busy.status).to.equal(409);
      const empty = await p.bucket('empty');
      expect((await p.req('DELETE', `/assets/buckets/${empty.id}`)).status).to.equal(204);
      expect((await p.req('GET', `/assets/buckets/${empty.id}`)).status).to.equal(404);
    });

    it("answers a bucket's revision as ETag and changes or deletes it only at the revision If-Match names", async () => {
      const p = await project();
      const created = await p.req('POST', '/assets/buckets', { name: 'rev' });
      expect(created.body.version).to.equal(1);
      expect(created.headers.get('etag')).to.equal('"1"');
      expect(created.headers.get('location')).to.equal(`/api/v1/assets/buckets/${created.body.id}`);
      expect((await p.req('GET', '/assets/buckets/rev')).headers.get('etag')).to.equal('"1"');
      const changed = await c.t.request('PATCH', '/assets/buckets/rev', {
        key: p.key,
        body: { maxFileBytes: 500 },
        headers: { 'if-match': '"1"' },
      });
      expect(changed.status).to.equal(200);
      expect(changed.body).to.include({ version: 2, maxFileBytes: 500 });
      expect(changed.headers.get('etag')).to.equal('"2"');
      const stale = await c.t.request('PATCH', '/assets/buckets/rev', {
        key: p.key,
        body: { maxFileBytes: 9 },
        headers: { 'if-match': '"1"' },
      });
      expect(stale.status).to.equal(412);
      expect(stale.body.error).to.include({ code: 'PRECONDITION_FAILED' });
      expect(stale.body.error.details).to.include({ currentVersion: 2 });
      const staleDelete = await c.t.request('DELETE', '/assets/buckets/rev', {
        key: p.key,
        headers: { 'if-match': '"1"' },
      });
      expect(staleDelete.status).to.equal(412);
      expect((await p.req('GET', '/assets/buckets/rev')).body).to.include({ version: 2, maxFileBytes: 500 });
      expect(
        (await c.t.request('DELETE', '/assets/buckets/rev', { key: p.key, headers: { 'if-match': '"2"' } })).status,
      ).to.equal(204);
      expect((await p.req('GET', '/assets/buckets/rev')).status).to.equal(404);
    });
  });

  describe('upload, metadata and signed download', () => {
    it('uploads a file, answers its metadata and serves the same bytes through the signed link', async () => {
      const p = await project();
      await p.bucket('docs');
      const content = randomBytes(100_000);
      const res = await upload(c.t, 'docs', content, {
        key: p.key,
        filename: 'report 2024 é.pdf',
        type: 'application/pdf',
      });
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

      const { redirect, link, file } = await download(c.t, asset.id, p.key);
      expect(redirect.status).to.equal(302);
      expect(redirect.headers.get('cache-control')).to.equal('no-store');
      const expires = Date.parse(redirect.headers.get('x-link-expires')!);
      expect(expires - Date.now()).to.be.within(880_000, 901_000);
      if (driver === 'fs')
        expect(link).to.match(new RegExp(`^${c.t.service.restUrl}/api/v1/assets/signed/${asset.id}\\?exp=\\d+&sig=`));
      else
        expect(link).to.match(
          new RegExp(`^${c.s3!.config.endpoint}/${c.s3!.config.bucket}/.*${asset.id}\\?.*X-Amz-Expires=900`),
        );
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
      const res = await upload(c.t, 'web', Buffer.from('<script>alert(1)</script>'), {
        key: p.key,
        filename: 'x.html',
        type: 'text/html',
      });
      const { file } = await download(c.t, res.body.id, p.key);
      expect(file!.headers.get('content-disposition')).to.match(/^attachment; filename="x.html"/);
    });

    it('keeps the storage key its own: a client file name never becomes a path', async () => {
      const p = await project();
      await p.bucket('names');
      const res = await upload(c.t, 'names', Buffer.from('hi'), { key: p.key, filename: '../../../etc/passwd' });
      expect(res.status).to.equal(201);
      expect(res.body.name).to.equal('passwd');
      const row = await c.t.service.db('assets').where('id', res.body.id).first();
      expect(row.storage_key).to.equal(`${p.tenantId}/${p.projectId}/${res.body.id}`);
    });

    it('lists the assets of a bucket and counts them in the bucket usage', async () => {
      const p = await project();
      await p.bucket('many');
      const ids = [];
      for (const text of ['one', 'two', 'three'])
        ids.push((await upload(c.t, 'many', Buffer.from(text), { key: p.key })).body.id);
      const page1 = await p.req('GET', '/assets/buckets/many/assets?limit=2');
      expect(page1.body.items.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(0, 2));
      const page2 = await p.req('GET', `/assets/buckets/many/assets?limit=2&cursor=${page1.body.nextCursor}`);
      expect(page2.body.items.map((a: { id: string }) => a.id)).to.deep.equal(ids.slice(2));
      expect((await p.req('GET', '/assets/buckets/many')).body.usage).to.deep.equal({ assets: 3, bytes: 11 });
      expect((await p.req('GET', '/assets/usage')).body).to.include({
        tier: 'free',
        usedBytes: 11,
        quotaBytes: tierLimits('free').storageBytes,
      });
    });

    it("answers an asset's revision as ETag and changes or deletes it only at the revision If-Match names", async () => {
      const p = await project();
      await p.bucket('rev-assets');
      const up = await upload(c.t, 'rev-assets', Buffer.from('versioned'), { key: p.key });
      expect(up.status).to.equal(201);
      expect(up.body.version).to.equal(1);
      expect(up.headers.get('etag')).to.equal('"1"');
      expect(up.headers.get('location')).to.equal(`/api/v1/assets/items/${up.body.id}`);
      const id = up.body.id;
      expect((await p.req('GET', `/assets/items/${id}`)).headers.get('etag')).to.equal('"1"');
      const opened = await c.t.request('PATCH', `/assets/items/${id}`, {
        key: p.key,
        body: { visibility: 'public' },
        headers: { 'if-match': '"1"' },
      });
      expect(opened.status).to.equal(200);
      expect(opened.body).to.include({ version: 2, visibility: 'public', publicUrl: `/api/v1/assets/public/${id}` });
      expect(opened.headers.get('etag')).to.equal('"2"');
      const stale = await c.t.request('PATCH', `/assets/items/${id}`, {
        key: p.key,
        body: { visibility: 'private' },
        headers: { 'if-match': '"1"' },
      });
      expect(stale.status).to.equal(412);
      expect(stale.body.error.details).to.include({ currentVersion: 2 });
      await storesNothing(async () => {
        const staleDelete = await c.t.request('DELETE', `/assets/items/${id}`, {
          key: p.key,
          headers: { 'if-match': '"1"' },
        });
        expect(staleDelete.status).to.equal(412);
      });
      expect((await p.req('GET', `/assets/items/${id}`)).body).to.include({ version: 2, visibility: 'public' });
      const deleted = await c.t.request('DELETE', `/assets/items/${id}`, {
        key: p.key,
        headers: { 'if-match': '"2"' },
      });
      expect(deleted.status).to.equal(200);
      expect(deleted.body.archive).to.include({ bucket: '_deletion', version: 1 });
    });
  });

  describe('public assets', () => {
    it('serves a public asset without a key, and answers 304 to its ETag', async () => {
      const p = await project();
      const content = randomBytes(5000);
      const res = await upload(c.t, 'profil', content, {
        key: p.key,
        filename: 'me.png',
        type: 'image/png',
        fields: { visibility: 'public' },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body).to.include({ visibility: 'public', publicUrl: `/api/v1/assets/public/${res.body.id}` });
      const file = await fetchBytes(`${c.t.service.restUrl}${res.body.publicUrl}`);
      expect(file.status).to.equal(200);
      expect(sha256(file.bytes)).to.equal(sha256(content));
      expect(file.headers.get('content-type')).to.equal('image/png');
      const again = await fetchBytes(`${c.t.service.restUrl}${res.body.publicUrl}`, {
        headers: { 'if-none-match': `"${sha256(content)}"` },
      });
      expect(again.status).to.equal(304);
      expect(again.bytes.length).to.equal(0);
    });

    it('answers the same 404 for a private asset, a missing one and one made private again', async () => {
      const p = await project();
      await p.bucket('mixed');
      const priv = await upload(c.t, 'mixed', Buffer.from('secret'), { key: p.key });
      const pub = await upload(c.t, 'mixed', Buffer.from('open'), { key: p.key, fields: { visibility: 'public' } });
      const get = (id: string) => c.t.request('GET', `/assets/public/${id}`, { key: null });
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
        const res = await upload(c.t, 'vis', Buffer.from('x'), { key: p.key, fields: { visibility: 'everyone' } });
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
      const res = await upload(c.t, 'signed', content, { key: p.key, type: 'text/plain' });
      return { p, id: res.body.id as string, content };
    }

    it('refuses a tampered link with 403 and no file', async () => {
      const { p, id } = await asset();
      const { link } = await download(c.t, id, p.key);
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
      const { link } = await download(c.t, a.id, a.p.key);
      const foreign = link!.replace(a.id, b.id);
      const res = await fetchBytes(foreign);
      expect(res.status).to.equal(403);
      expect(sha256(res.bytes)).not.to.equal(sha256(b.content));
    });

    it('refuses an expired link with 403', async () => {
      const { id } = await asset();
      // A link signed 16 minutes ago, with the service's own keys, as if kept since then.
      const drivers = await StorageDrivers.create(c.t.service.config, c.t.service.db);
      const row = await c.t.service.db('assets').where('id', id).first();
      const link = await drivers
        .get(driver)
        .signedUrl(
          { assetId: id, key: row.storage_key, name: row.name, contentType: row.content_type },
          { origin: c.t.service.restUrl, expiresInSec: 900, now: new Date(Date.now() - 16 * 60_000) },
        );
      drivers.stop();
      const res = await fetchBytes(link);
      expect(res.status).to.equal(403);
      if (driver === 'fs') expect(JSON.parse(res.text).error.details).to.deep.equal({ reason: 'expired' });
      else expect(res.text).to.include('Request has expired');
    });
  });
});
