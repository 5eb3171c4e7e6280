// The rule of run.start.allowedOrigins (docs/runner.md "The list and the rule"), the same for every
// executor: an origin is scheme, host and port (the scheme's default port filled in); a WebSocket is
// judged as the http(s) origin on the same host and port; URLs that load nothing from the network
// (about:, data:, blob:, javascript:) are always allowed, any other scheme never.

/** Schemes that load nothing from the network: always allowed. */
const LOCAL_SCHEMES = new Set(['about:', 'data:', 'blob:', 'javascript:']);
/** A WebSocket URL is judged as the http(s) origin on the same host and port: ws counts as http, wss as https. */
const SAME_AS: Record<string, string> = { 'ws:': 'http:', 'wss:': 'https:' };
const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** An http(s) or ws(s) URL's origin under the rule; undefined for any other URL. */
export function originOf(url: string): { origin: string; host: string; port: number } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const scheme = SAME_AS[parsed.protocol] ?? parsed.protocol;
  const defaultPort = DEFAULT_PORT[scheme];
  if (defaultPort === undefined) return undefined;
  const port = parsed.port ? Number(parsed.port) : defaultPort;
  return { origin: `${scheme}//${parsed.hostname}:${port}`, host: parsed.hostname, port };
}

/** The origins of an allowedOrigins list (entries that are not http(s) or ws(s) URLs are ignored). */
export function allowedOriginSet(allowedOrigins: readonly string[]): Set<string> {
  const origins = new Set<string>();
  for (const entry of allowedOrigins) {
    const o = originOf(entry);
    if (o) origins.add(o.origin);
  }
  return origins;
}

/** Whether a URL may be reached under a set made by allowedOriginSet. */
export function urlAllowed(origins: ReadonlySet<string>, url: string): boolean {
  if (LOCAL_SCHEMES.has(url.slice(0, url.indexOf(':') + 1).toLowerCase())) return true;
  const o = originOf(url);
  return o !== undefined && origins.has(o.origin);
}
