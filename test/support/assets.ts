// Helpers for the asset tests: multipart uploads over real HTTP, signed downloads followed by hand,
// and a census of everything an upload could leave behind (rows, files, objects).

import { createHash } from 'node:crypto';
import path from 'node:path';
import { listFiles, type TestS3 } from './s3.js';
import type { TestService } from './service.js';

export const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

export interface UploadOptions {
  key?: string;
  filename?: string;
  type?: string;
  /** Extra text fields (visibility, runId, ...). */
  fields?: Record<string, string>;
  /** Sends the form as a chunked stream, without Content-Length. */
  chunked?: boolean;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, body, headers: res.headers };
}

/** POSTs a multipart form with `file` to a path under /api/v1. */
export async function postFile(
  t: TestService,
  urlPath: string,
  content: Uint8Array,
  options: UploadOptions = {},
): Promise<Answer> {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value);
  form.append(
    'file',
    new Blob([content as BlobPart], { type: options.type ?? 'application/octet-stream' }),
    options.filename ?? 'file.bin',
  );
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? t.adminKey}` };
  let body: BodyInit = form;
  if (options.chunked) {
    // Same bytes, but streamed: the service cannot know the size up front.
    const encoded = new Response(form);
    headers['content-type'] = encoded.headers.get('content-type')!;
    body = encoded.body!;
  }
  const res = await fetch(`${t.api}${urlPath}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  const got = await answer(res);
  // Checked against /openapi.json with every other response of the suite.
  t.responses.push({
    method: 'POST',
    path: `/api/v1${urlPath}`,
    status: got.status,
    body: got.body,
    contentType: res.headers.get('content-type'),
  });
  return got;
}

export function upload(
  t: TestService,
  bucket: string,
  content: Uint8Array,
  options: UploadOptions = {},
): Promise<Answer> {
  return postFile(t, `/assets/buckets/${bucket}/assets`, content, options);
}

/** Fetches any URL without a key (a signed link is all it needs). */
export async function fetchBytes(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; bytes: Buffer; headers: Headers; text: string }> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, headers: res.headers, text: bytes.toString('utf8') };
}

/** GET …/download (302), then the signed link it points at, over real HTTP and without a key. */
export async function download(t: TestService, id: string, key = t.adminKey) {
  const redirect = await t.request('GET', `/assets/items/${id}/download`, { key });
  if (redirect.status !== 302) return { redirect, link: undefined, file: undefined };
  const link = redirect.headers.get('location')!;
  return { redirect, link, file: await fetchBytes(link) };
}

export interface Census {
  rows: number;
  files: string[];
  objects: string[];
}

/** Everything stored anywhere: asset rows, files under DATA_DIR/assets, objects in the S3 server. */
export async function census(t: TestService, s3?: TestS3): Promise<Census> {
  const { count } = (await t.service.db('assets').count('* as count').first()) as { count: number };
  return {
    rows: Number(count),
    files: await listFiles(path.join(t.service.config.dataDir, 'assets')),
    objects: s3 ? await s3.files() : [],
  };
}
