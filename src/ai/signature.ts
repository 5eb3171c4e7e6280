// The signature of a failed step: what caused it, with what changes from run to run taken out, so
// the same cause on other runs and other cases reads the same, and different causes do not.
// Signature = error code + action + the locator's identity + the message normalised.
import { createHash } from 'node:crypto';
import { OtpErrorCode } from '../../machines/types.js';

/** Codes that are no failure of the product or its environment: the run was cancelled, the step skipped. */
const NOT_FAILURES: ReadonlySet<string> = new Set([OtpErrorCode.cancelled, OtpErrorCode.skipped]);

/** A step that failed or errored for a cause worth a signature (the ai room's one rule of which). */
export function isSignedFailure(step: { status: string; error?: unknown }): boolean {
  if (step.status !== 'fail' && step.status !== 'error') return false;
  return !NOT_FAILURES.has((step.error as { code?: string } | null | undefined)?.code ?? '');
}

/** The parts a signature is made of (each shown in a cluster so a reader sees what was grouped). */
export interface SignatureParts {
  code: string;
  action: string;
  /** The locator's identity (`role=button[name=Save]`), or '' for a step without one. */
  locator: string;
  /** The message with its volatile parts replaced. */
  message: string;
}

interface LocatorLike {
  by?: unknown;
  value?: unknown;
  name?: unknown;
  nth?: unknown;
  within?: unknown;
  frame?: unknown;
  candidates?: unknown;
}

/**
 * A locator as the step declared it, reduced to what identifies it: strategy, value, name, index,
 * parent and frame. Candidates are identified by their first (the one the test means), so a step
 * whose fallback changes keeps its signature.
 */
export function locatorIdentity(locator: unknown): string {
  if (!locator || typeof locator !== 'object') return '';
  const l = locator as LocatorLike;
  if (Array.isArray(l.candidates)) return locatorIdentity(l.candidates[0]);
  let text = `${String(l.by)}=${String(l.value)}`;
  if (l.name !== undefined) text += `[name=${String(l.name)}]`;
  if (l.nth !== undefined) text += `[nth=${String(l.nth)}]`;
  if (l.within) text = `${locatorIdentity(l.within)} >> ${text}`;
  if (l.frame !== undefined) text = `frame(${String(l.frame)}) >> ${text}`;
  return text;
}

const URL_START = /^(https?|wss?):\/\//i;

// Order matters: URLs before quotes (a URL may sit inside quotes), ids before plain numbers.
const REPLACEMENTS: Array<[RegExp, string | ((...m: string[]) => string)]> = [
  // A URL keeps its origin and path (they say where), loses its query and fragment (they say when).
  [
    /\b(https?|wss?):\/\/([^\s"'`“”<>?#]+)(?:[?#][^\s"'`“”<>]*)?/gi,
    (_m, scheme: string, rest: string) => `${scheme.toLowerCase()}://${normalisePath(rest)}`,
  ],
  // Quoted values: what was typed, observed or expected changes with the data, not the cause.
  // (a URL in quotes stays, normalised: it says where, not what).
  [/"((?:[^"\\\n]|\\.){0,500})"/g, (m, inner: string) => (URL_START.test(inner) ? m : '"<v>"')],
  [/“([^”\n]{0,500})”/g, (m, inner: string) => (URL_START.test(inner) ? m : '“<v>”')],
  // Single quotes only around a value, not the apostrophes of "isn't ... it's".
  [/(?<!\w)'((?:[^'\\\n]|\\.){1,500})'(?!\w)/g, (m, inner: string) => (URL_START.test(inner) ? m : "'<v>'")],
  [/`[^`\n]{1,500}`/g, '`<v>`'],
  // Ids: UUIDs, the service's own (otr_01H...), long hex (hashes, Mongo ids), timestamps.
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
  [/\b[a-z]{2,5}_[0-9a-hjkmnp-tv-z]{26}\b/gi, '<id>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b/gi, '<id>'],
  // Numbers (counts, durations, positions), with their unit when they have one.
  [/-?\b\d+(?:[.,]\d+)*(?:\s?(?:ms|s|px|%))?/g, '<n>'],
];

function normalisePath(rest: string): string {
  // Numeric or id-like path segments (/orders/4711, /u/3f2a9c...) vary per record.
  return rest.replace(/\/(\d+|[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f-]{27})(?=\/|$)/gi, '/<id>').replace(/\/+$/, '');
}

/** The message with URLs' queries, quoted values, ids, times and numbers replaced; whitespace folded; at most 500 characters. */
export function normaliseMessage(message: string): string {
  let text = message.slice(0, 4000);
  for (const [pattern, replacement] of REPLACEMENTS) text = text.replace(pattern, replacement as string);
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

export function signatureParts(step: {
  code?: string | null;
  action?: unknown;
  message?: string | null;
}): SignatureParts {
  const action = (step.action ?? {}) as { action?: unknown; locator?: unknown; kind?: unknown };
  const verb =
    action.action === 'assert' && action.kind ? `assert:${String(action.kind)}` : String(action.action ?? 'unknown');
  return {
    code: step.code ?? 'E_UNKNOWN',
    action: verb,
    locator: locatorIdentity(action.locator),
    message: normaliseMessage(step.message ?? ''),
  };
}

/** `sig_` and 20 hex characters of the SHA-256 of the parts: the same parts, the same signature. */
export function signatureOf(parts: SignatureParts): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([parts.code, parts.action, parts.locator, parts.message]))
    .digest('hex');
  return `sig_${hash.slice(0, 20)}`;
}
