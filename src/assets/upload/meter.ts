// A pass-through that hashes (SHA-256) and counts the bytes of an upload as they stream by, and
// fails the stream the moment it grows past its limit.
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export class LimitExceeded extends Error {
  constructor(readonly limitBytes: number) {
    super(`upload exceeds ${limitBytes} bytes`);
  }
}

export class Meter extends Transform {
  bytes = 0;
  /** Set once the stream went past its limit. */
  exceeded = false;
  private readonly hash = createHash('sha256');

  constructor(private readonly limitBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limitBytes) {
      this.exceeded = true;
      return callback(new LimitExceeded(this.limitBytes));
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** Hex SHA-256 of everything that passed; call once the stream has ended. */
  digest(): string {
    return this.hash.digest('hex');
  }
}
