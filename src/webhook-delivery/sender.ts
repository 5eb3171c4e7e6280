// One attempt: a POST of the event's body with Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature with one v1 signature per live secret), to an address checked after DNS
// resolution (the connection goes to the address that was checked), within a time limit. Redirects
// are not followed: any answer but 2xx is a failure.

import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkAddress, literalAddress, TargetRefused } from '../artifacts/webhooks/targets.js';
import type { AttemptOutcome } from './delivery-store.js';

const EXCERPT_BYTES = 1024;

/** A whsec_ secret is base64 of the key (the Standard Webhooks form); any other string is the key's UTF-8 bytes. */
function signer(secret: string): Webhook {
  return secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
}

/** The three Standard Webhooks headers; several secrets (a rotation's grace period) give several signatures. */
/** Plain words for a failed connection to a receiver: its code, never the addresses Node puts in the message. */
const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'the receiver refused the connection',
  ECONNRESET: 'the receiver closed the connection',
  EPIPE: 'the receiver closed the connection',
  ENOTFOUND: 'the host name was not found',
  EAI_AGAIN: 'the host name could not be resolved (temporary failure)',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
};

export function deliveryFailure(err: Error): string {
  if (err instanceof TargetRefused) return err.message;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_FAILURES[code]) return `${NETWORK_FAILURES[code]} (${code})`;
    if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code))
      return `the TLS handshake failed (${code})`;
    return `the delivery failed (${code})`;
  }
  return 'the delivery failed';
}

export function signatureHeaders(
  msgId: string,
  body: string,
  secrets: readonly string[],
  at = new Date(),
): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => signer(s).sign(msgId, at, body)).join(' '),
  };
}

/** dns.lookup that refuses addresses a webhook may not reach: the socket connects only to what passed. */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      try {
        for (const { address } of addresses) checkAddress(address, hostname, allowPrivate);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 4);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

export interface SendInput {
  url: string;
  msgId: string;
  body: string;
  secrets: readonly string[];
  timeoutMs: number;
  allowPrivate: boolean;
}

export function send({ url, msgId, body, secrets, timeoutMs, allowPrivate }: SendInput): Promise<AttemptOutcome> {
  const started = performance.now();
  const done = (outcome: Omit<AttemptOutcome, 'durationMs'>): AttemptOutcome => ({
    ...outcome,
    durationMs: performance.now() - started,
  });
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
      const literal = literalAddress(target.hostname);
      if (literal) checkAddress(literal, literal, allowPrivate);
    } catch (err) {
      return resolve(done({ ok: false, error: err instanceof TargetRefused ? err.message : 'invalid url' }));
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'otp-service-webhooks/1.0',
      ...signatureHeaders(msgId, body, secrets),
    };
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      headers,
      lookup: checkedLookup(allowPrivate),
      signal: AbortSignal.timeout(timeoutMs),
      agent: false,
    });
    request.on('error', (err) => {
      const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
      resolve(done({ ok: false, error: timedOut ? `no answer within ${timeoutMs} ms` : deliveryFailure(err) }));
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        const status = response.statusCode ?? 0;
        const excerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') || undefined;
        const ok = status >= 200 && status < 300;
        resolve(done({ ok, statusCode: status, excerpt, ...(ok ? {} : { error: `answered ${status}` }) }));
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= EXCERPT_BYTES) finish();
      });
      response.on('end', finish);
      response.on('error', finish);
    });
    request.end(body);
  });
}
