// Files under DATA_DIR/assets, at paths made from service-generated keys only. A write goes to a
// `.part` file beside its target and is renamed into place once complete, so a failed upload leaves
// nothing a reader could see, and its partial file is removed.

import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type SignedUrlOptions, STORAGE_KEY_PATTERN, type StorageDriver, type StoredObjectRef } from './driver.js';
import { guardStorage } from './unavailable.js';
import type { UrlSigner } from './url-signer.js';

export class FsDriver implements StorageDriver {
  readonly provider = 'fs' as const;

  constructor(
    private readonly root: string,
    private readonly signer: UrlSigner,
  ) {}

  /** The file of a key; refuses anything that is not a service-made key. */
  pathOf(key: string): string {
    if (!STORAGE_KEY_PATTERN.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    const file = path.resolve(this.root, ...key.split('/'));
    if (!file.startsWith(this.root + path.sep)) throw new Error(`storage key escapes the storage root: ${key}`);
    return file;
  }

  async put(key: string, body: Readable): Promise<void> {
    const file = this.pathOf(key);
    await guardStorage(() => fsp.mkdir(path.dirname(file), { recursive: true }));
    const partial = `${file}.${randomBytes(6).toString('hex')}.part`;
    const out = fs.createWriteStream(partial, { flags: 'wx' });
    try {
      await pipeline(body, out);
      await fsp.rename(partial, file);
    } catch (err) {
      body.destroy();
      // A body that fails at once (a size limit on the first chunk) may fail before the file is even
      // open: the stream opens it later, then closes it. Removing it before that 'close' left the
      // .part file behind (now and then, more often on a busy machine).
      if (!out.closed) {
        out.destroy();
        await once(out, 'close').catch(() => {});
      }
      await fsp.rm(partial, { force: true });
      // A body that failed (size limit, client gone) is the request's failure; a disk that did is the store's.
      if (body.errored !== null) throw err;
      return guardStorage(() => Promise.reject(err));
    }
  }

  async get(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    // Open first, so a missing file is an error here rather than in the middle of a response.
    const handle = await guardStorage(() => fsp.open(file, 'r'));
    return handle.createReadStream();
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    const target = this.pathOf(toKey);
    const source = this.pathOf(fromKey);
    await guardStorage(async () => {
      await fsp.mkdir(path.dirname(target), { recursive: true });
      await fsp.copyFile(source, target, fs.constants.COPYFILE_EXCL);
    });
  }

  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await guardStorage(() => fsp.rm(file, { force: true }));
  }

  async signedUrl(object: StoredObjectRef, options: SignedUrlOptions): Promise<string> {
    const now = options.now?.getTime() ?? Date.now();
    const expiresAt = Math.floor(now / 1000) + options.expiresInSec;
    const sig = this.signer.sign(object.assetId, expiresAt);
    return `${options.origin}/api/v1/assets/signed/${encodeURIComponent(object.assetId)}?exp=${expiresAt}&sig=${sig}`;
  }
}
