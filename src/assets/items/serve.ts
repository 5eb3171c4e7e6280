// Writes an asset's bytes as the response: streamed, with its type, length, a safe file name and
// its SHA-256 as ETag (a matching If-None-Match answers 304 without opening the file).

import type { Readable } from 'node:stream';
import type Koa from 'koa';
import { contentDisposition, safetyHeaders } from '../storage/content-disposition.js';
import type { AssetRow } from './view.js';

export async function serveAsset(
  koa: Koa.Context,
  row: AssetRow,
  open: () => Promise<Readable>,
  cacheControl: string,
): Promise<void> {
  const etag = `"${row.sha256}"`;
  koa.set({ ETag: etag, 'Cache-Control': cacheControl, ...safetyHeaders() });
  const ifNoneMatch = koa.get('if-none-match');
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
    koa.status = 304;
    koa.body = null;
    return;
  }
  const body = await open();
  koa.status = 200;
  koa.type = row.content_type;
  koa.set('Content-Disposition', contentDisposition(row.name, row.content_type));
  koa.body = body;
  // After the body: Koa drops Content-Length when a stream is assigned.
  koa.length = Number(row.size);
  koa.set('X-Checksum-Sha256', row.sha256);
}
