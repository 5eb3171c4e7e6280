// The object store down (a real s3rver the test stops hard and starts again on the same port and
// directory): uploads, evidence, reads and deletes answer 503 storage_unavailable with Retry-After,
// never 400 or 500, leave no row, no object and no multipart upload, and work again once it is back.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { census, fetchBytes, postFile, upload } from '../support/assets.js';
import { eventually } from '../support/eventually.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTestService, type TestService } from '../support/service.js';
import { expectStorageUnavailable, multipartUploads } from '../support/storage-outage.js';

describe('Storage outage (s3 driver, s3rver stopped)', () => {
  let s3: TestS3;
  let t: TestService;
  before(async () => {
    s3 = await startS3();
    t = await startTestService({ storage: { defaultDriver: 's3', s3: s3.config, maxUploadBytes: 32 * 1024 * 1024 } });
    const bucket = await t.request('POST', '/assets/buckets', { body: { name: 'files' } });
    expect(bucket.status, JSON.stringify(bucket.body)).to.equal(201);
  });
  after(async () => {
    await t?.stop();
    await s3?.stop();
  });
  afterEach(async () => s3.resume());

  it('answers an upload 503 storage_unavailable with Retry-After and keeps nothing (small, and multipart)', async () => {
    const before = await census(t, s3);
    await s3.halt();
    expectStorageUnavailable(await upload(t, 'files', randomBytes(10_000)), s3);
    // Over one part (5 MiB): the multipart path, streamed without Content-Length.
    expectStorageUnavailable(await upload(t, 'files', randomBytes(6 * 1024 * 1024), { chunked: true }), s3);
    await s3.resume();
    expect(await census(t, s3)).to.deep.equal(before);
    expect(await multipartUploads(s3)).to.deep.equal([]);
    // Back: the same upload goes through.
    const again = await upload(t, 'files', randomBytes(10_000));
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
  });

  it('answers an evidence upload 503 storage_unavailable, not 500', async () => {
    const before = await census(t, s3);
    await s3.halt();
    const answer = await postFile(t, '/otp/evidence', randomBytes(5_000), {
      filename: 'shot.png',
      type: 'image/png',
      fields: { runId: 'run_01hzzzzzzzzzzzzzzzzzzzzzzz', stepIndex: '0', kind: 'screenshot' },
    });
    expectStorageUnavailable(answer, s3);
    await s3.resume();
    expect(await census(t, s3)).to.deep.equal(before);
  });

  it('answers reads of a file and deletes 503 while the store is down, and serves them again after', async () => {
    const content = randomBytes(3_000);
    const stored = await upload(t, 'files', content, { fields: { visibility: 'public' } });
    expect(stored.status, JSON.stringify(stored.body)).to.equal(201);
    const id = stored.body.id as string;
    await s3.halt();
    const read = await fetchBytes(`${t.service.restUrl}/api/v1/assets/public/${id}`);
    expectStorageUnavailable({ status: read.status, body: JSON.parse(read.text), headers: read.headers }, s3);
    t.responses.push({
      method: 'GET',
      path: `/api/v1/assets/public/${id}`,
      status: read.status,
      body: JSON.parse(read.text),
      contentType: read.headers.get('content-type'),
    });
    expectStorageUnavailable(await t.request('DELETE', `/assets/items/${id}`), s3);
    expect((await t.request('GET', `/assets/items/${id}`)).status).to.equal(200);
    await s3.resume();
    const again = await eventually(async () => {
      const got = await fetchBytes(`${t.service.restUrl}/api/v1/assets/public/${id}`);
      expect(got.status).to.equal(200);
      return got;
    });
    expect(again.bytes.equals(content)).to.equal(true);
  });
});
