// A real S3-compatible server for the s3 driver's tests: @20minutes/s3rver on loopback, port 0,
// with its objects in a temporary directory. It checks SigV4 signatures and presigned-link expiry.
// Its bucket is made through its own option: bucket-level SDK calls fail its signature check.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import S3rver from '@20minutes/s3rver';
import type { S3Config } from '../../src/config.js';

export interface TestS3 {
  config: S3Config;
  /** Every file s3rver keeps (objects, metadata, multipart parts), relative to its directory. */
  files(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function listFiles(root: string): Promise<string[]> {
  const entries = await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

export async function startS3(bucket = 'otp-assets'): Promise<TestS3> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-test-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    config: {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    },
    files: () => listFiles(directory),
    stop: async () => {
      await server.close();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
