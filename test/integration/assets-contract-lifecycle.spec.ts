// The asset contract (test/support/assets-contract.ts): isolation, deletion, limits and quota.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { tierLimits, UPGRADE_URL } from '../../src/tiers.js';
import { census, download, sha256, upload } from '../support/assets.js';
import { describeAssetsContract, MAX_UPLOAD } from '../support/assets-contract.js';
import { eventually } from '../support/eventually.js';

describeAssetsContract('isolation, deletion, limits and quota', (c) => {
  const { driver, project, storesNothing } = c;

  describe('isolation', () => {
    it('shows another project nothing: metadata, links, changes, buckets and uploads are 404', async () => {
      const owner = await project();
      const other = await project();
      const bucket = await owner.bucket('private-stuff');
      const res = await upload(c.t, 'private-stuff', Buffer.from('mine'), { key: owner.key });
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
        expect((await upload(c.t, bucket.id, Buffer.from('intruder'), { key: other.key })).status).to.equal(404);
      });
      const listed = await other.req('GET', '/assets/buckets');
      expect(listed.body.items.map((b: { id: string }) => b.id)).not.to.include(bucket.id);
      expect((await owner.req('GET', `/assets/items/${id}`)).body.visibility).to.equal('private');
    });

    it('needs a key for everything but public reads and signed links, and write scope to change', async () => {
      const p = await project();
      await p.bucket('scoped');
      expect((await c.t.request('GET', '/assets/buckets', { key: null })).status).to.equal(401);
      await storesNothing(async () => {
        const res = await fetch(`${c.t.api}/assets/buckets/scoped/assets`, { method: 'POST', body: new FormData() });
        expect(res.status).to.equal(401);
      });
      const { key: readKey } = await c.t.newProject('read');
      const res = await upload(c.t, 'profil', Buffer.from('x'), { key: readKey, type: 'image/png' });
      expect(res.status).to.equal(403);
    });
  });

  describe('deletion', () => {
    it('archives a copy in _deletion (who, when, from where) before removing the asset', async () => {
      const p = await project();
      await p.bucket('temp');
      const content = randomBytes(4096);
      const res = await upload(c.t, 'temp', content, {
        key: p.key,
        filename: 'old.bin',
        fields: { visibility: 'public' },
      });
      const id = res.body.id;
      const original = await c.t.service.db('assets').where('id', id).first();
      const deleted = await p.req('DELETE', `/assets/items/${id}`);
      expect(deleted.status).to.equal(200);
      expect(deleted.body).to.include({ id, deleted: true });
      const archive = deleted.body.archive;
      expect(archive).to.include({
        bucket: '_deletion',
        name: 'old.bin',
        size: 4096,
        sha256: sha256(content),
        visibility: 'private',
        storageProvider: driver,
      });
      expect(archive.id).to.match(/^ast_/).and.not.equal(id);
      const keyId = (await c.t.service.db('api_keys').where('project_id', p.projectId).first('id')).id;
      expect(archive.archivedFrom).to.include({
        assetId: id,
        bucket: 'temp',
        bucketId: res.body.bucketId,
        visibility: 'public',
        deletedBy: keyId,
        createdBy: keyId,
      });
      expect(Math.abs(Date.parse(archive.archivedFrom.deletedAt) - Date.now())).to.be.below(60_000);

      expect((await p.req('GET', `/assets/items/${id}`)).status).to.equal(404);
      expect((await c.t.request('GET', `/assets/public/${id}`, { key: null })).status).to.equal(404);
      const listed = await p.req('GET', '/assets/buckets/_deletion/assets');
      expect(listed.body.items.map((a: { id: string }) => a.id)).to.deep.equal([archive.id]);
      const { file } = await download(c.t, archive.id, p.key);
      expect(sha256(file!.bytes)).to.equal(sha256(content));
      // The original object is gone from storage; only the archive copy remains.
      const where = await census(c.t, c.s3);
      const stored = [...where.files, ...where.objects].join('\n');
      expect(stored).not.to.include(original.storage_key.split('/').pop());
      expect(stored).to.include(archive.id);

      const purged = await p.req('DELETE', `/assets/items/${archive.id}`);
      expect(purged.body).to.deep.equal({ id: archive.id, deleted: true, archive: null });
      const after = await census(c.t, c.s3);
      expect([...after.files, ...after.objects].join('\n')).not.to.include(archive.id);
      expect((await p.req('GET', '/assets/buckets/_deletion/assets')).body.items).to.deep.equal([]);
    });

    it('does not count _deletion against the quota', async () => {
      const p = await project();
      await p.bucket('q');
      const res = await upload(c.t, 'q', randomBytes(1000), { key: p.key });
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
      const first = await upload(c.t, 'counted', randomBytes(1500), { key: p.key });
      expect(first.status).to.equal(201);
      await upload(c.t, 'profil', randomBytes(700), { key: p.key, type: 'image/png' });
      const after = await p.req('GET', '/platform/entitlement');
      expect(after.body.usage.storageBytes).to.equal(2200);
      expect(after.body.usage.storageBytes).to.equal((await p.req('GET', '/assets/usage')).body.usedBytes);
      // Another project's files are not counted, nor the _deletion copy of a deleted one.
      const other = await project();
      await upload(c.t, 'profil', randomBytes(300), { key: other.key, type: 'image/png' });
      await p.req('DELETE', `/assets/items/${first.body.id}`);
      expect((await p.req('GET', '/platform/entitlement')).body.usage.storageBytes).to.equal(700);
    });

    it('takes no direct uploads into _deletion or otp-evidence', async () => {
      const p = await project();
      for (const name of ['_deletion', 'otp-evidence']) {
        await storesNothing(async () => {
          const res = await upload(c.t, name, Buffer.from('x'), { key: p.key });
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
        const res = await upload(c.t, 'big', randomBytes(MAX_UPLOAD + 100 * 1024), { key: p.key });
        expect(res.status).to.equal(413);
        expect(res.body.error).to.include({ code: 'PAYLOAD_TOO_LARGE' });
        expect(res.body.error.details).to.deep.equal({ limitBytes: MAX_UPLOAD });
      });
      await storesNothing(async () => {
        // One byte over, within the form's allowance: refused while it streams.
        const res = await upload(c.t, 'big', randomBytes(MAX_UPLOAD + 1), { key: p.key });
        expect(res.status).to.equal(413);
      });
      await storesNothing(async () => {
        const res = await upload(c.t, 'big', randomBytes(MAX_UPLOAD + 50_000), { key: p.key, chunked: true });
        expect(res.status).to.equal(413);
      });
      const exact = await upload(c.t, 'big', randomBytes(MAX_UPLOAD), { key: p.key, chunked: true });
      expect(exact.status).to.equal(201);
      expect(exact.body.size).to.equal(MAX_UPLOAD);
    });

    it("keeps to a bucket's own size limit and content types", async () => {
      const p = await project();
      await p.bucket('small', { maxFileBytes: 100, allowedContentTypes: ['image/*'] });
      await storesNothing(async () => {
        const res = await upload(c.t, 'small', randomBytes(101), { key: p.key, type: 'image/png' });
        expect(res.status).to.equal(413);
        expect(res.body.error.message).to.include('bucket "small"');
      });
      await storesNothing(async () => {
        const res = await upload(c.t, 'small', randomBytes(10), { key: p.key, type: 'text/html' });
        expect(res.status).to.equal(415);
        expect(res.body.error.details).to.deep.equal({ contentType: 'text/html', allowedContentTypes: ['image/*'] });
      });
      expect((await upload(c.t, 'small', randomBytes(100), { key: p.key, type: 'image/webp' })).status).to.equal(201);
    });

    it("answers 402 QUOTA_EXCEEDED with upgradeUrl when the tier's storage is used up", async () => {
      const p = await project();
      const bucket = await p.bucket('quota');
      // The project already holds its quota but for 1000 bytes (a row standing for earlier uploads).
      const quota = tierLimits('free').storageBytes;
      await c.t.service.db('assets').insert({
        id: `ast_fixture_${p.projectId.slice(4)}`,
        tenant_id: p.tenantId,
        project_id: p.projectId,
        bucket_id: bucket.id,
        name: 'earlier',
        size: quota - 1000,
        content_type: 'application/octet-stream',
        sha256: '0'.repeat(64),
        storage_provider: driver,
        storage_key: `${p.tenantId}/${p.projectId}/earlier`,
      });
      await storesNothing(async () => {
        // Refused by its Content-Length before it is read.
        const res = await upload(c.t, 'quota', randomBytes(200 * 1024), { key: p.key });
        expect(res.status).to.equal(402);
        expect(res.body.error.code).to.equal('QUOTA_EXCEEDED');
        expect(res.body.upgradeUrl).to.equal(UPGRADE_URL);
        expect(res.body.error.details).to.include({ tier: 'free', quotaBytes: quota, usedBytes: quota - 1000 });
      });
      await storesNothing(async () => {
        // Refused while it streams.
        const res = await upload(c.t, 'quota', randomBytes(1001), { key: p.key, chunked: true });
        expect(res.status).to.equal(402);
        expect(res.body.upgradeUrl).to.equal(UPGRADE_URL);
      });
      // Two uploads that each fit but not together: the project lock lets exactly one in. The test
      // holds that lock until both wait for it, so that both pass the checks made before the lock
      // (otherwise the second may start after the first is in and be refused while it streams).
      const db = c.t.service.db;
      const holder = await db.transaction();
      await holder.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`assets:quota:${p.projectId}`]);
      const both = Promise.all([
        upload(c.t, 'quota', randomBytes(600), { key: p.key }),
        upload(c.t, 'quota', randomBytes(600), { key: p.key }),
      ]);
      try {
        await eventually(async () => {
          const waiting = await db.raw(
            `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
              WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()`,
          );
          expect(waiting.rows[0].n).to.equal(2);
        });
      } finally {
        await holder.commit();
      }
      const [a, b] = await both;
      expect([a.status, b.status].sort()).to.deep.equal([201, 402]);
      const rows = await c.t.service.db('assets').where('project_id', p.projectId);
      expect(rows.map((r) => Number(r.size)).sort((x, y) => x - y)).to.deep.equal([600, quota - 1000]);
      const accepted = [a, b].find((r) => r.status === 201)!;
      const refused = [a, b].find((r) => r.status === 402)!;
      expect(refused.body.error.details.uploadBytes).to.equal(600);
      // What is stored for the project is the accepted file only: the refused one was removed.
      const stored = await census(c.t, c.s3);
      const mine = [...stored.files, ...stored.objects].filter((f) => f.includes(p.projectId));
      expect(mine).not.to.be.empty;
      for (const f of mine) expect(f).to.include(accepted.body.id);
      await c.t.service.db('assets').where('project_id', p.projectId).delete();
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
        const res = await fetch(`${c.t.api}/assets/buckets/forms/assets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}` },
          body: form,
        });
        expect(res.status).to.equal(400);
        expect((await res.json()).error.details.fields).to.deep.equal([{ field: 'body.file', message: 'required' }]);
      });
      await storesNothing(async () => {
        const res = await upload(c.t, 'forms', Buffer.from('x'), { key: p.key, fields: { colour: 'red' } });
        expect(res.status).to.equal(400);
        expect(res.body.error.message).to.include('colour');
      });
      await storesNothing(async () => {
        // A form cut off in the middle of its file.
        const boundary = 'XyZ';
        const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${'a'.repeat(5000)}`;
        const res = await fetch(`${c.t.api}/assets/buckets/forms/assets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        });
        expect(res.status).to.equal(400);
        expect((await res.json()).error.message).to.match(/Malformed multipart body/);
      });
    });
  });
});
