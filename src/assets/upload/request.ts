// The raw upload request of a route, and what to do when it is refused before it was read.
import type Koa from 'koa';
import type { UploadRequest } from '../items/asset-service.js';

export function uploadRequest(koa: Koa.Context): UploadRequest {
  const declared = koa.get('content-length');
  return { req: koa.req, contentLength: declared && /^\d+$/.test(declared) ? Number(declared) : undefined };
}

/**
 * Runs an upload; when it is refused before the client finished sending, the connection is closed
 * after the answer rather than drained (a refused 1 GB body is not read to its end).
 */
export async function refusingEarly<T>(koa: Koa.Context, upload: () => Promise<T>): Promise<T> {
  try {
    return await upload();
  } catch (err) {
    if (!koa.req.complete) koa.set('Connection', 'close');
    throw err;
  }
}
