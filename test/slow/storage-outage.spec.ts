// The object store dies in the middle of a large streamed upload (64 MiB, sent as a stream without
// Content-Length; the s3 driver sends it as a multipart upload in 5 MiB parts). Once some parts are
// in, the test stops s3rver hard. The answer is 503 storage_unavailable (not a 400 blaming the body),
// no row is written, and once s3rver is back (same port, same directory) the driver's abort of the
// multipart upload gets through: ListMultipartUploads is empty, no part and no object is left.
import { expect } from 'chai';
import { census } from '../support/assets.js';
import { eventually } from '../support/eventually.js';
import { startS3, type TestS3 } from '../support/s3.js';
import { startTestService, type TestService } from '../support/service.js';
import { expectStorageUnavailable, multipartUploads } from '../support/storage-outage.js';

const MiB = 1024 * 1024;
const FILE_BYTES = 64 * MiB;
/** Bytes sent before the test waits for parts to reach S3 (four parts' worth). */
const BEFORE_HALT = 20 * MiB;

/** A multipart form with one file part of FILE_BYTES, streamed; `midway` runs once BEFORE_HALT bytes are out. */
function streamedForm(boundary: string, midway: () => Promise<void>): ReadableStream<Uint8Array> {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(MiB, 7);
  let sent = -1;
  let paused = false;
  return new ReadableStream({
    async pull(controller) {
      if (sent < 0) {
        controller.enqueue(head);
        sent = 0;
        return;
      }
      if (sent >= BEFORE_HALT && !paused) {
        paused = true;
        await midway();
      }
      if (sent >= FILE_BYTES) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

describe('Storage outage during a large streamed upload (s3rver stopped once parts are in)', function () {
  this.timeout(180_000);
  let s3: TestS3;
  let t: TestService;
  before(async () => {
    s3 = await startS3();
    t = await startTestService({ storage: { defaultDriver: 's3', s3: s3.config, maxUploadBytes: 128 * MiB } });
    const bucket = await t.request('POST', '/assets/buckets', { body: { name: 'big' } });
    expect(bucket.status, JSON.stringify(bucket.body)).to.equal(201);
  });
  after(async () => {
    await s3?.resume();
    await t?.stop();
    await s3?.stop();
  });

  it('answers 503 storage_unavailable, writes no row, and leaves no multipart upload once S3 is back', async () => {
    const before = await census(t, s3);
    let parts = 0;
    const twoParts = new Promise<void>((resolve) => {
      s3.requests.on('request', (method: string, url: string) => {
        if (method === 'PUT' && /[?&]partNumber=/.test(url) && ++parts === 2) resolve();
      });
    });
    const boundary = 'outage-boundary-0123456789';
    const res = await fetch(`${t.api}/assets/buckets/big/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: streamedForm(boundary, async () => {
        await twoParts;
        await s3.halt();
      }),
      duplex: 'half',
    } as RequestInit);
    const body = await res.json();
    t.responses.push({
      method: 'POST',
      path: '/api/v1/assets/buckets/big/assets',
      status: res.status,
      body,
      contentType: res.headers.get('content-type'),
    });
    expect(parts).to.be.at.least(2);
    expectStorageUnavailable({ status: res.status, body, headers: res.headers }, s3);
    expect((await census(t, s3)).rows).to.equal(before.rows);

    // While it was down, parts stayed on S3; the driver's abort gets through once it is back.
    const aborted = new Promise<void>((resolve) => {
      s3.requests.on('request', (method: string, url: string) => {
        if (method === 'DELETE' && /[?&]uploadId=/.test(url)) resolve();
      });
    });
    await s3.resume();
    await aborted;
    await eventually(async () => expect(await multipartUploads(s3)).to.deep.equal([]), 30_000, 200);
    expect(await census(t, s3)).to.deep.equal(before);
    // And the store takes uploads again.
    s3.requests.removeAllListeners('request');
    const small = new FormData();
    small.append('file', new Blob([Buffer.alloc(1000, 1)]), 'small.bin');
    const again = await fetch(`${t.api}/assets/buckets/big/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}` },
      body: small,
    });
    expect(again.status).to.equal(201);
    t.responses.push({
      method: 'POST',
      path: '/api/v1/assets/buckets/big/assets',
      status: again.status,
      body: await again.json(),
      contentType: again.headers.get('content-type'),
    });
  });
});
