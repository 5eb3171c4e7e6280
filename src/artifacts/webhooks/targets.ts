// Where a webhook may send: not to this host, its network or the cloud's metadata address, unless the
// configuration allows private targets (WEBHOOK_ALLOW_PRIVATE). Checked when a subscription is written
// (its url's literal address, or the addresses its name resolves to now) and again at every delivery,
// after resolution, on the address the request then connects to (see webhook-delivery/sender.ts), so
// a name that later resolves to a private address is refused too.

import dns from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Address ranges a webhook may not reach, by what they are (IPv4-mapped IPv6 addresses match the IPv4 rules). */
const RANGES: Array<[string, string, number, 'ipv4' | 'ipv6']> = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared (carrier-grade NAT)', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['documentation', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['benchmarking', '198.18.0.0', 15, 'ipv4'],
  ['documentation', '198.51.100.0', 24, 'ipv4'],
  ['documentation', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['NAT64', '64:ff9b::', 96, 'ipv6'],
  ['documentation', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];

const lists = new Map<string, BlockList>();
for (const [kind, network, prefix, family] of RANGES) {
  const list = lists.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  lists.set(kind, list);
}

/** What kind of address this is when a webhook may not reach it ('loopback', 'private', ...), else null. */
export function refusedKind(address: string): string | null {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  for (const [kind, list] of lists) if (list.check(address, family)) return kind;
  return null;
}

export class TargetRefused extends Error {}

/** The host of a url as an address when it is one (brackets of IPv6 literals removed). */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) ? bare : null;
}

/** Throws TargetRefused when a webhook may not reach the address (named when it is the url's own). */
export function checkAddress(address: string, host: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const kind = refusedKind(address);
  if (kind) {
    // A name's address is not told: it would map the service's own network for whoever asks.
    const what = address === host ? `${address} is a ${kind} address` : `${host} resolves to a ${kind} address`;
    throw new TargetRefused(`${what}; webhooks may not reach it unless WEBHOOK_ALLOW_PRIVATE is set`);
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address of a name, or none when it does not resolve (within `timeoutMs`). */
function lookupAll(host: string, timeoutMs: number): Promise<ResolvedAddress[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs);
    dns.lookup(host, { all: true, verbatim: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? [] : addresses);
    });
  });
}

/**
 * The check of a subscription's url when it is written: a literal address, or every address its name
 * resolves to now. A name that does not resolve yet is accepted: each delivery checks again.
 */
export async function checkTargetUrl(url: string, allowPrivate: boolean, timeoutMs = 2_000): Promise<void> {
  if (allowPrivate) return;
  const host = new URL(url).hostname;
  const literal = literalAddress(host);
  const addresses = literal ? [{ address: literal, family: isIP(literal) }] : await lookupAll(host, timeoutMs);
  for (const { address } of addresses) checkAddress(address, literal ?? host, allowPrivate);
}
