// When a locator has drifted (docs/ai.md, "Healing"): a step passed only through a candidate other
// than its first, or its first candidate matched nothing while another matched exactly one element.
// The fix proposed is that other candidate, and only when the executor reported that it matched
// exactly one element, visible and enabled (a heal onto a hidden or neighbouring element makes a
// failing test pass; an executor that does not report visibility gets no proposal).
import { createHash } from 'node:crypto';
import type { LocatorStep } from '../run-history.js';

type Loc = Record<string, unknown>;
const TRIED_ONLY = new Set(['count', 'visible', 'enabled']);

/** A locator's own members, in a fixed order (what was tried about it left out). */
export function locatorOf(value: unknown): Loc {
  const out: Loc = {};
  for (const key of Object.keys(value as Loc).sort()) if (!TRIED_ONLY.has(key)) out[key] = (value as Loc)[key];
  return out;
}

export const sameLocator = (a: unknown, b: unknown) => JSON.stringify(locatorOf(a)) === JSON.stringify(locatorOf(b));

export interface Sighting {
  testCaseId: string;
  version: number | null;
  position: number;
  label: string | null;
  oldLocator: Loc;
  newLocator: Loc;
  runId: string;
  createdAt: string;
  status: string;
  /** What each candidate matched in that run. */
  counts: Array<{ locator: Loc; count: number | null; visible?: boolean; enabled?: boolean }>;
  screenshotAssetId: string | null;
  rule: 'passed_through_other' | 'first_matched_nothing';
}

/** The sighting a step's report makes, or null when it shows no drift or no safe replacement. */
export function sightingOf(step: LocatorStep): Sighting | null {
  const first = step.locator.candidates[0];
  if (!first) return null;
  const tried = (step.triedLocators ?? []) as Array<Loc & { count?: number; visible?: boolean; enabled?: boolean }>;
  let replacement: unknown;
  let rule: Sighting['rule'];
  if (step.status === 'pass' && step.usedLocator && !sameLocator(step.usedLocator, first)) {
    replacement = step.usedLocator;
    rule = 'passed_through_other';
  } else {
    const firstTried = tried.find((t) => sameLocator(t, first));
    if (firstTried?.count !== 0) return null;
    replacement = tried.find((t) => !sameLocator(t, first) && t.count === 1);
    rule = 'first_matched_nothing';
  }
  if (!replacement) return null;
  const proof = tried.find((t) => sameLocator(t, replacement));
  if (proof?.count !== 1 || proof.visible !== true || proof.enabled !== true) return null;
  return {
    testCaseId: step.testCaseId,
    version: step.version,
    position: step.position,
    label: step.label,
    oldLocator: locatorOf(first),
    newLocator: locatorOf(replacement),
    runId: step.runId,
    createdAt: step.createdAt,
    status: step.status,
    counts: tried.map((t) => ({
      locator: locatorOf(t),
      count: t.count ?? null,
      ...(t.visible !== undefined ? { visible: t.visible } : {}),
      ...(t.enabled !== undefined ? { enabled: t.enabled } : {}),
    })),
    screenshotAssetId: step.screenshotAssetId,
    rule,
  };
}

/** The same case, step, old and new locator: one proposal, and one refusal remembered. */
export function evidenceKey(s: Pick<Sighting, 'testCaseId' | 'position' | 'oldLocator' | 'newLocator'>): string {
  return createHash('sha256')
    .update(JSON.stringify([s.testCaseId, s.position, s.oldLocator, s.newLocator]))
    .digest('hex')
    .slice(0, 32);
}

export interface ProposalDraft {
  key: string;
  testCaseId: string;
  version: number | null;
  position: number;
  oldLocator: Loc;
  newLocator: Loc;
  evidence: {
    rule: Sighting['rule'];
    label: string | null;
    runs: Array<{ runId: string; createdAt: string; status: string }>;
    occurrences: number;
    counts: Sighting['counts'];
    screenshotAssetId: string | null;
    firstSeen: string;
    lastSeen: string;
  };
}

/** The sightings grouped by evidence key, the newest run's counts and screenshot kept. */
export function proposalsOf(steps: readonly LocatorStep[]): ProposalDraft[] {
  const byKey = new Map<string, ProposalDraft>();
  const sightings = steps
    .map(sightingOf)
    .filter((s): s is Sighting => s !== null)
    .sort((a, b) => (a.runId < b.runId ? 1 : -1));
  for (const s of sightings) {
    const key = evidenceKey(s);
    const seen = byKey.get(key);
    if (seen) {
      seen.evidence.occurrences += 1;
      if (seen.evidence.runs.length < 10)
        seen.evidence.runs.push({ runId: s.runId, createdAt: s.createdAt, status: s.status });
      seen.evidence.firstSeen = s.createdAt;
      seen.evidence.screenshotAssetId ??= s.screenshotAssetId;
      continue;
    }
    byKey.set(key, {
      key,
      testCaseId: s.testCaseId,
      version: s.version,
      position: s.position,
      oldLocator: s.oldLocator,
      newLocator: s.newLocator,
      evidence: {
        rule: s.rule,
        label: s.label,
        runs: [{ runId: s.runId, createdAt: s.createdAt, status: s.status }],
        occurrences: 1,
        counts: s.counts,
        screenshotAssetId: s.screenshotAssetId,
        firstSeen: s.createdAt,
        lastSeen: s.createdAt,
      },
    });
  }
  return [...byKey.values()];
}
