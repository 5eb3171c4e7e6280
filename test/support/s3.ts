// A real S3-compatible server for the s3 driver's tests: @20minutes/s3rver on loopback, port 0,
// with its objects in a temporary directory. It checks SigV4 signatures and presigned-link expiry.
// Its bucket is made through its own option: bucket-level SDK calls fail its signature check.
//
// s3rver answers AbortMultipartUpload and ListMultipartUploads with 405/501; the outage tests need
// both (a failed multipart upload must be aborted, and a test must see that none is left), so
// `withMultipartUploads` adds the two operations over s3rver's own store of uploads (its directory
// `<bucket>/<uploads dir>/<uploadId>/{key,metadata,<part>}`), ahead of its router and without its
// signature check. The server can be stopped hard (open connections cut, as a crash or a network
// partition does) and started again on the same port and directory.

import { EventEmitter } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from '@20minutes/s3rver';
import type { S3Config } from '../../src/config.js';

export interface TestS3 {
  config: S3Config;
  /** Every file s3rver keeps (objects, metadata, multipart parts), relative to its directory. */
  files(): Promise<string[]>;
  /** Stops listening and cuts every open connection (requests in flight fail); the files stay. */
  halt(): Promise<void>;
  /** Starts again on the same port and directory after halt(). */
  resume(): Promise<void>;
  /** Emits 'request' (method, url) for every request the server receives. */
  requests: EventEmitter;
  stop(): Promise<void>;
}

interface KoaLike {
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void> | void>;
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
}
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | undefined>;
  status: number;
  type: string;
  body: unknown;
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Adds AbortMultipartUpload and ListMultipartUploads to an s3rver (see the top of this file). */
function withMultipartUploads(server: S3rver, bucket: string): void {
  const app = server as unknown as KoaLike;
  const uploadsDir = () => app.store.getResourcePath(bucket, undefined, 'uploads');
  const operations = async (ctx: KoaContext, next: () => Promise<void>) => {
    const [pathBucket, ...keyParts] = ctx.path.split('/').filter(Boolean);
    if (pathBucket !== bucket) return next();
    if (ctx.method === 'DELETE' && keyParts.length && ctx.query.uploadId) {
      const dir = path.join(uploadsDir(), path.basename(ctx.query.uploadId));
      const exists = await fs.stat(dir).then(
        () => true,
        () => false,
      );
      if (!exists) {
        ctx.status = 404;
        ctx.type = 'application/xml';
        ctx.body =
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>';
        return;
      }
      await fs.rm(dir, { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && !keyParts.length && 'uploads' in ctx.query) {
      const ids = await fs.readdir(uploadsDir()).catch(() => [] as string[]);
      const uploads = await Promise.all(
        ids.map(async (id) => ({
          id,
          key: await fs.readFile(path.join(uploadsDir(), id, 'key'), 'utf8').catch(() => ''),
        })),
      );
      ctx.status = 200;
      ctx.type = 'application/xml';
      ctx.body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
        `<Bucket>${xml(bucket)}</Bucket><IsTruncated>false</IsTruncated>` +
        uploads.map((u) => `<Upload><Key>${xml(u.key)}</Key><UploadId>${xml(u.id)}</UploadId></Upload>`).join('') +
        '</ListMultipartUploadsResult>';
      return;
    }
    return next();
  };
  // Just before s3rver's router (its last middleware), after its path-style/vhost handling.
  app.middleware.splice(app.middleware.length - 1, 0, operations);
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
  const requests = new EventEmitter();
  const open = async (port: number) => {
    const started = new S3rver({
      address: '127.0.0.1',
      port,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }],
    });
    withMultipartUploads(started, bucket);
    const address = await started.run();
    const http = (started as unknown as { httpServer: import('node:http').Server }).httpServer;
    http.on('request', (req: import('node:http').IncomingMessage) => requests.emit('request', req.method, req.url));
    return { server: started, address };
  };
  const first = await open(0);
  let server = first.server;
  const { port } = first.address;
  let running = true;
  const halt = async () => {
    if (!running) return;
    running = false;
    const http = (server as unknown as { httpServer: import('node:http').Server }).httpServer;
    const closed = server.close();
    http.closeAllConnections();
    await closed;
  };
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
    requests,
    halt,
    resume: async () => {
      if (running) return;
      ({ server } = await open(port));
      running = true;
    },
    stop: async () => {
      await halt();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
