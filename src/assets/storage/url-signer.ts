// Signed download links for assets the service serves itself (the fs driver): an HMAC-SHA256 over
// method, asset id and expiry. The key lives in the database (shared by every service process) and
// never appears in a link.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/connect.js';

export type SignatureCheck = 'valid' | 'expired' | 'invalid';

const KEY_ID = 'download-links';

export class UrlSigner {
  constructor(private readonly secret: Buffer) {}

  /** The key stored under `asset_signing_keys`, created on first use (any process may be first). */
  static async load(db: Db): Promise<UrlSigner> {
    await db('asset_signing_keys')
      .insert({ id: KEY_ID, secret: randomBytes(32).toString('base64url') })
      .onConflict('id')
      .ignore();
    const row = await db('asset_signing_keys').where('id', KEY_ID).first('secret');
    return new UrlSigner(Buffer.from(row.secret, 'base64url'));
  }

  sign(assetId: string, expiresAt: number, method = 'GET'): string {
    return createHmac('sha256', this.secret).update(`${method}\n${assetId}\n${expiresAt}`).digest('base64url');
  }

  /** `expiresAt` in Unix seconds, as it came in the link. */
  check(
    assetId: string,
    expiresAt: string | undefined,
    signature: string | undefined,
    now = Date.now(),
    method = 'GET',
  ): SignatureCheck {
    if (!expiresAt || !signature || !/^\d{1,12}$/.test(expiresAt)) return 'invalid';
    const expected = Buffer.from(this.sign(assetId, Number(expiresAt), method));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return Number(expiresAt) * 1000 < now ? 'expired' : 'valid';
  }
}
