// Objects in one S3 (or S3-compatible) bucket. Uploads of unknown length go up as multipart uploads
// in parts of PART_SIZE, a few at a time, so memory stays bounded whatever the file size; downloads
// are presigned GETs that the client fetches from S3 directly.

import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../../config.js';
import type { Logger } from '../../log.js';
import {
  type ObjectMeta,
  type SignedUrlOptions,
  STORAGE_KEY_PATTERN,
  type StorageDriver,
  type StoredObjectRef,
} from './driver.js';
import { guardStorage } from './unavailable.js';

/** S3's smallest part; with QUEUE_SIZE parts in flight this bounds an upload's memory. */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;
/** A failed multipart upload's abort is retried (S3 may be the reason it failed) this long, backing off to ABORT_RETRY_MAX_MS. */
const ABORT_RETRY_FOR_MS = 60 * 60_000;
const ABORT_RETRY_FIRST_MS = 250;
const ABORT_RETRY_MAX_MS = 5_000;

function clientConfig(config: S3Config, endpoint: string | undefined): S3ClientConfig {
  return {
    region: config.region,
    endpoint,
    forcePathStyle: config.forcePathStyle,
    credentials:
      config.accessKeyId && config.secretAccessKey
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined,
    // Without these the SDK frames streamed bodies as aws-chunked with trailing checksums, which
    // S3-compatible servers store verbatim or refuse.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Without these a store that stops answering (rather than refusing) holds a request forever:
    // a connection must open within a few seconds, and a socket may sit idle at most half a minute.
    requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 },
  };
}

export class S3Driver implements StorageDriver {
  readonly provider = 's3' as const;
  private readonly client: S3Client;
  /** Signs links with the address clients use, when that differs from the one the service uses. */
  private readonly presignClient: S3Client;

  /** Aborts of failed multipart uploads waiting for S3 to answer again. */
  private readonly pendingAborts = new Set<NodeJS.Timeout>();

  constructor(
    private readonly config: S3Config,
    private readonly log?: Logger,
  ) {
    this.client = new S3Client(clientConfig(config, config.endpoint));
    this.presignClient = config.publicEndpoint
      ? new S3Client(clientConfig(config, config.publicEndpoint))
      : this.client;
  }

  private checked(key: string): string {
    if (!STORAGE_KEY_PATTERN.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return key;
  }

  async put(key: string, body: Readable, meta: ObjectMeta): Promise<void> {
    const upload = new Upload({
      client: this.client,
      // The object carries its own response headers, so presigned links need no response-* overrides.
      params: {
        Bucket: this.config.bucket,
        Key: this.checked(key),
        Body: body,
        ContentType: meta.contentType,
        ContentDisposition: meta.contentDisposition,
      },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      // The upload's own abort is one try, and its failure (S3 still down) would replace the error
      // that says what happened: the driver aborts instead, retrying until S3 answers.
      leavePartsOnError: true,
    });
    try {
      await upload.done();
    } catch (err) {
      // A body that failed (size limit, client gone, bad form) is the request's failure, not the store's.
      const bodyFailed = body.errored !== null;
      body.destroy();
      if (upload.uploadId) this.abortMultipart(key, upload.uploadId);
      if (bodyFailed) throw err;
      return guardStorage(() => Promise.reject(err));
    }
  }

  /** Aborts a failed multipart upload so that no part stays billed; retried in the background while S3 is down. */
  private abortMultipart(key: string, uploadId: string): void {
    const started = Date.now();
    const attempt = (delayMs: number) => {
      const timer = setTimeout(() => {
        this.pendingAborts.delete(timer);
        this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.config.bucket, Key: key, UploadId: uploadId }))
          .then(
            () => {},
            (err: { name?: string }) => {
              if (err?.name === 'NoSuchUpload') return;
              if (Date.now() - started < ABORT_RETRY_FOR_MS)
                return attempt(Math.min(delayMs * 2 || ABORT_RETRY_FIRST_MS, ABORT_RETRY_MAX_MS));
              this.log?.error(
                'could not abort a failed multipart upload; its parts stay until a lifecycle rule removes them',
                { key, uploadId, err },
              );
            },
          );
      }, delayMs);
      timer.unref();
      this.pendingAborts.add(timer);
    };
    attempt(0);
  }

  async get(key: string): Promise<Readable> {
    const out = await guardStorage(() =>
      this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.checked(key) })),
    );
    return out.Body as Readable;
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    const command = new CopyObjectCommand({
      Bucket: this.config.bucket,
      Key: this.checked(toKey),
      CopySource: `${this.config.bucket}/${this.checked(fromKey)}`,
    });
    await guardStorage(() => this.client.send(command));
  }

  async delete(key: string): Promise<void> {
    const command = new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.checked(key) });
    await guardStorage(() => this.client.send(command));
  }

  signedUrl(object: StoredObjectRef, options: SignedUrlOptions): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.config.bucket, Key: this.checked(object.key) });
    return getSignedUrl(this.presignClient, command, { expiresIn: options.expiresInSec, signingDate: options.now });
  }

  stop(): void {
    for (const timer of this.pendingAborts) clearTimeout(timer);
    this.pendingAborts.clear();
    this.client.destroy();
    if (this.presignClient !== this.client) this.presignClient.destroy();
  }
}
