// isStorageUnavailable against real answers: the AWS SDK talking to a real s3rver (up, stopped), to
// an HTTP server answering 503 SlowDown as S3 does under load, and the fs driver's disk errors.

import fs from 'node:fs/promises';
import http from 'node:http';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { guardStorage, isStorageUnavailable, isStoreFailure } from '../../src/assets/storage/unavailable.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { normaliseError } from '../../src/errors.js';
import { startS3, type TestS3 } from '../support/s3.js';

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

const clientOf = (endpoint: string, secret = 'S3RVER') =>
  new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: secret },
  });

describe('isStorageUnavailable (the store down, not a refused request)', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startS3();
  });
  after(async () => s3?.stop());

  it('is false for 4xx answers of a running store: NoSuchKey, a bad signature', async () => {
    const client = clientOf(s3.config.endpoint!);
    const wrongKey = clientOf(s3.config.endpoint!, 'not-the-secret');
    try {
      const missing = await failure(
        client.send(new GetObjectCommand({ Bucket: s3.config.bucket, Key: 'no/such/key' })),
      );
      expect((missing as Error).name).to.equal('NoSuchKey');
      const denied = await failure(wrongKey.send(new GetObjectCommand({ Bucket: s3.config.bucket, Key: 'k' })));
      expect((denied as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode).to.be.within(400, 499);
      for (const err of [missing, denied]) {
        expect(isStorageUnavailable(err), String(err)).to.equal(false);
        expect(isStoreFailure(err), String(err)).to.equal(false);
        expect(normaliseError(err).code).to.equal('INTERNAL');
      }
    } finally {
      client.destroy();
      wrongKey.destroy();
    }
  });

  it("is true for a stopped store: the SDK's network error, and the same tagged by a driver", async () => {
    await s3.halt();
    const client = clientOf(s3.config.endpoint!);
    try {
      const err = await failure(client.send(new GetObjectCommand({ Bucket: s3.config.bucket, Key: 'k' })));
      expect(isStoreFailure(err), String(err)).to.equal(true);
      // The SDK marks its errors ($metadata): recognised without the driver's tag.
      expect(isStorageUnavailable(err), String(err)).to.equal(true);
      expect(normaliseError(err).code).to.equal('storage_unavailable');
      const tagged = await failure(
        guardStorage(() => client.send(new GetObjectCommand({ Bucket: s3.config.bucket, Key: 'k' }))),
      );
      expect(isStorageUnavailable(tagged)).to.equal(true);
      expect(normaliseError(tagged).code).to.equal('storage_unavailable');
      expect(normaliseError(tagged).extra.headers?.['Retry-After']).to.equal('5');
      // Its socket code alone would read as the database's; the SDK's mark says it is not.
      expect(isDatabaseUnavailable(err)).to.equal(false);
      expect(isDatabaseUnavailable(tagged)).to.equal(false);
      expect(normaliseError(new Error('wrapped', { cause: tagged })).code).to.equal('storage_unavailable');
    } finally {
      client.destroy();
      await s3.resume();
    }
  });

  it('is true for a 503 SlowDown answer', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = clientOf(`http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`);
    try {
      const err = await failure(client.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' })));
      expect((err as Error).name).to.equal('SlowDown');
      expect(isStorageUnavailable(err)).to.equal(true);
      expect(normaliseError(err).code).to.equal('storage_unavailable');
    } finally {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("counts the fs driver's full disk (ENOSPC on /dev/full) as the store's, not a missing file", async () => {
    const full = await failure(fs.writeFile('/dev/full', Buffer.alloc(4096)));
    expect((full as { code: string }).code).to.equal('ENOSPC');
    expect(isStoreFailure(full)).to.equal(true);
    expect(
      normaliseError(await failure(guardStorage(() => fs.writeFile('/dev/full', Buffer.alloc(4096))))).code,
    ).to.equal('storage_unavailable');
    const missing = await failure(guardStorage(() => fs.readFile('/nonexistent/file')));
    expect(isStorageUnavailable(missing)).to.equal(false);
  });
});
