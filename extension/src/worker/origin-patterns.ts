// allowedOrigins as declarativeNetRequest sees URLs: a regexFilter per origin (RE2, matched against
// the whole URL), under the protocol's origin rule (src/otp/protocol/origins.ts).
import { originOf } from '../../../src/otp/protocol/origins.js';

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regexFilter of URLs of an origin (the default port may be written or not; ws as http). */
export function originPattern(origin: string): string | undefined {
  const o = originOf(origin);
  if (!o) return undefined;
  const [scheme] = o.origin.split('//');
  const schemes = scheme === 'https:' ? '(https|wss)' : '(http|ws)';
  const isDefault = (scheme === 'https:' && o.port === 443) || (scheme === 'http:' && o.port === 80);
  const host = o.host.startsWith('[') ? escapeRegex(o.host) : escapeRegex(o.host.toLowerCase());
  return `^${schemes}://${host}${isDefault ? `(:${o.port})?` : `:${o.port}`}([/?#]|$)`;
}
