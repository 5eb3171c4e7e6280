// Objects in one S3 (or S3-compatible) bucket. Uploads of unknown length go up as multipart uploads
// in parts of PART_SIZE, a few at a time, so memory stays bounded whatever the file size; downloads
// are presigned GETs that the client fetches from S3 directly.
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../config.js';
import { STORAGE_KEY_PATTERN, type ObjectMeta, type SignedUrlOptions, type StorageDriver, type StoredObjectRef } from './driver.js';

/** S3's smallest part; with QUEUE_SIZE parts in flight this bounds an upload's memory. */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 2;

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
  };
}

export class S3Driver implements StorageDriver {
  readonly provider = 's3' as const;
  private readonly client: S3Client;
  /** Signs links with the address clients use, when that differs from the one the service uses. */
  private readonly presignClient: S3Client;

  constructor(private readonly config: S3Config) {
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
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      body.destroy();
      throw err;
    }
  }

  async get(key: string): Promise<Readable> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.checked(key) }));
    return out.Body as Readable;
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.config.bucket,
        Key: this.checked(toKey),
        CopySource: `${this.config.bucket}/${this.checked(fromKey)}`,
      }),
    );
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.checked(key) }));
  }

  signedUrl(object: StoredObjectRef, options: SignedUrlOptions): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.config.bucket, Key: this.checked(object.key) });
    return getSignedUrl(this.presignClient, command, { expiresIn: options.expiresInSec, signingDate: options.now });
  }

  stop(): void {
    this.client.destroy();
    if (this.presignClient !== this.client) this.presignClient.destroy();
  }
}
