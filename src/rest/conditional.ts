// ETag and If-Match. A record's ETag is its revision (`version`) in quotes: strong, since the same
// revision always renders the same JSON. A write with If-Match names the revisions it was based on;
// the store applies it only to one of those (atomically, in the UPDATE's WHERE) or answers 412.
import { errors } from '../errors.js';

export function etagOf(version: number): string {
  return `"${version}"`;
}

/** What If-Match allows: any existing revision ('*'), one of a list, or no condition (undefined). */
export type IfMatch = '*' | number[] | undefined;

/**
 * Parses an If-Match header. Weak tags never match (RFC 9110 uses the strong comparison for
 * If-Match) and tags that are not ours match nothing, so both lead to 412, never to a blind write.
 */
export function parseIfMatch(header: string | undefined): IfMatch {
  if (header === undefined || header.trim() === '') return undefined;
  if (header.trim() === '*') return '*';
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const match = /^\s*"(\d{1,9})"\s*$/.exec(part);
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

/** Throws 412 when the current revision is not one the client named. */
export function checkIfMatch(ifMatch: IfMatch, current: number, what: string): void {
  if (ifMatch === undefined || ifMatch === '*') return;
  if (!ifMatch.includes(current)) {
    throw errors.preconditionFailed(
      `${what} has changed since you read it (now revision ${current}); read it again and retry`,
      {
        currentVersion: current,
        etag: etagOf(current),
      },
    );
  }
}
