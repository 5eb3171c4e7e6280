// How a stored file is offered to a browser. Only types a browser cannot run as a page are shown
// inline; everything else (HTML, SVG, scripts, unknown types) is a download, so an uploaded file can
// never execute on the service's origin.
const INLINE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'video/mp4',
  'video/webm',
  'audio/mpeg',
  'audio/ogg',
  'application/pdf',
  'text/plain',
]);

export function isInlineType(contentType: string): boolean {
  return INLINE_TYPES.has(contentType);
}

/** RFC 6266 header with an ASCII fallback name and the exact name in RFC 5987 form. */
export function contentDisposition(name: string, contentType: string): string {
  const kind = isInlineType(contentType) ? 'inline' : 'attachment';
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Headers every served asset carries, whichever route serves it. */
export function safetyHeaders(): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; img-src 'self'; media-src 'self'; sandbox",
  };
}
