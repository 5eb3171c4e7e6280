// The driver is chosen per bucket for new assets and recorded per asset row: a bucket moved from
// fs to s3 keeps serving the assets it wrote with fs.

import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { expect } from 'chai';
import { census, download, fetchBytes, sha256, upload } from '../support/assets.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTestService, type TestService } from '../support/service.js';

describe('Assets: one driver per bucket, recorded per asset', () => {
  let t: TestService;
  let s3: TestS3;

  before(async () => {
    s3 = await startS3();
    t = await startTestService({ storage: { defaultDriver: 'fs', s3: s3.config, maxUploadBytes: 1024 * 1024 } });
  });
  after(async () => {
    await t?.stop();
    await s3?.stop();
  });

  it('keeps serving fs assets after the bucket moves to s3, and writes new ones to s3', async () => {
    const created = await t.request('POST', '/assets/buckets', { body: { name: 'moving' } });
    expect(created.body.driver).to.equal('fs');
    const oldContent = randomBytes(10_000);
    const old = await upload(t, 'moving', oldContent, { fields: { visibility: 'public' } });
    expect(old.body.storageProvider).to.equal('fs');

    const moved = await t.request('PATCH', '/assets/buckets/moving', { body: { driver: 's3' } });
    expect(moved.status).to.equal(200);
    expect(moved.body.driver).to.equal('s3');
    const newContent = randomBytes(10_000);
    const fresh = await upload(t, 'moving', newContent, { fields: { visibility: 'public' } });
    expect(fresh.body.storageProvider).to.equal('s3');

    const oldLink = await download(t, old.body.id);
    expect(oldLink.link).to.match(new RegExp(`^${t.service.restUrl}/api/v1/assets/signed/`));
    expect(sha256(oldLink.file!.bytes)).to.equal(sha256(oldContent));
    const newLink = await download(t, fresh.body.id);
    expect(newLink.link).to.match(new RegExp(`^${s3.config.endpoint}/`));
    expect(sha256(newLink.file!.bytes)).to.equal(sha256(newContent));
    for (const [id, content] of [
      [old.body.id, oldContent],
      [fresh.body.id, newContent],
    ] as const) {
      const pub = await fetchBytes(`${t.service.restUrl}/api/v1/assets/public/${id}`);
      expect(sha256(pub.bytes)).to.equal(sha256(content));
    }
    const stored = await census(t, s3);
    expect(stored.files.some((f) => f.endsWith(old.body.id))).to.equal(true);
    expect(stored.objects.some((f) => f.includes(fresh.body.id))).to.equal(true);

    // Deleting the fs asset archives it with fs, whatever the bucket's driver now is.
    const deleted = await t.request('DELETE', `/assets/items/${old.body.id}`);
    expect(deleted.body.archive.storageProvider).to.equal('fs');
    const archived = await download(t, deleted.body.archive.id);
    expect(sha256(archived.file!.bytes)).to.equal(sha256(oldContent));
  });

  it('refuses by Content-Length before reading the body: a huge declared upload is answered at once', async () => {
    await t.request('POST', '/assets/buckets', { body: { name: 'declared' } });
    const before = await census(t, s3);
    // Declares 2 GB, sends a few bytes, and waits: the answer must come without the rest.
    const answer = await new Promise<{ status: number; body: any; connection?: string }>((resolve, reject) => {
      const req = http.request(`${t.api}/assets/buckets/declared/assets`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${t.adminKey}`,
          'content-type': 'multipart/form-data; boundary=xyz',
          'content-length': String(2 * 1024 ** 3),
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text), connection: res.headers.connection }),
        );
      });
      req.on('error', reject);
      req.write('--xyz\r\nContent-Disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n');
    });
    expect(answer.status).to.equal(413);
    expect(answer.body.error.details).to.deep.equal({ limitBytes: 1024 * 1024 });
    expect(answer.connection).to.equal('close');
    expect(await census(t, s3)).to.deep.equal(before);
  });

  it('refuses a driver this service has not configured, naming the field', async () => {
    const res = await t.request('POST', '/assets/buckets', { body: { name: 'ftp', driver: 'ftp' } });
    expect(res.status).to.equal(400);
    expect(res.body.error.details.fields[0].field).to.equal('body.driver');
  });
});

describe('Assets: a service without S3', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ storage: { defaultDriver: 'fs', s3: undefined } });
  });
  after(async () => t?.stop());

  it('makes fs buckets and refuses s3 with a clear error', async () => {
    const res = await t.request('POST', '/assets/buckets', { body: { name: 'cloud', driver: 's3' } });
    expect(res.status).to.equal(400);
    expect(res.body.error.details.fields).to.deep.equal([
      { field: 'body.driver', message: 'set S3_BUCKET (and S3_ENDPOINT, credentials) to enable s3' },
    ]);
    const local = await t.request('POST', '/assets/buckets', { body: { name: 'local' } });
    expect(local.body.driver).to.equal('fs');
  });
});
