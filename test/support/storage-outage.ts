// Checks of the storage outage tests: what an answer of a store that is down looks like, and the
// multipart uploads an S3 server still holds.

import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import type { TestS3 } from './s3.js';

export async function multipartUploads(s3: TestS3): Promise<string[]> {
  const client = new S3Client({
    region: s3.config.region,
    endpoint: s3.config.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.config.accessKeyId!, secretAccessKey: s3.config.secretAccessKey! },
  });
  try {
    const out = await client.send(new ListMultipartUploadsCommand({ Bucket: s3.config.bucket }));
    return (out.Uploads ?? []).map((u) => `${u.Key} ${u.UploadId}`);
  } finally {
    client.destroy();
  }
}

/** An answer of the store being down: 503, the code, Retry-After, and nothing of the store's own text. */
export function expectStorageUnavailable(answer: { status: number; body: any; headers: Headers }, s3: TestS3): void {
  expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
  expect(answer.body.error.code).to.equal('storage_unavailable');
  expect(answer.headers.get('retry-after')).to.match(/^\d+$/);
  const text = JSON.stringify(answer.body);
  expect(text).not.to.include(new URL(s3.config.endpoint!).port);
  expect(text).not.to.match(/ECONN|127\.0\.0\.1| {4}at /);
}
