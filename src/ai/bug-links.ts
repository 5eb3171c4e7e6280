// Known issues from every link a person makes: a bug counts for a failure when it is linked to the
// failure's signature (the bug-draft route, ai_signature_bugs), to an earlier test result of a run
// that failed the same case with the same signature (found_by from POST /bugs/{id}/links, a bug filed
// by hand, links made later), or to the test case itself. The artifacts room owns bugs and links and
// answers through the BugLinkSource port (implemented in src/artifacts/bug-links.ts).

import type { Db } from '../db/connect.js';
import type { LinkedBug } from './bugs.js';

/** A failure of a case in an OTP run: the pair whose test result a bug may be linked to. */
export interface CaseRun {
  runId: string;
  testCaseId: string;
}

/** A bug linked (either direction, any relation) to a test case or to the test result of a case in a run. */
export interface BugLinkRow {
  bugId: string;
  title: string | null;
  status: string | null;
  relation: string;
  target: 'test_case' | 'test_result';
  targetId: string;
  testCaseId: string;
  /** The OTP run of the test result (null for a link to the test case). */
  runId: string | null;
}

/** The artifacts room's answer: bugs linked to these test cases or to the results of these case runs. */
export interface BugLinkSource {
  linkedBugs(projectId: string, testCaseIds: readonly string[], results: readonly CaseRun[]): Promise<BugLinkRow[]>;
}

/** How a bug is tied to a failure, strongest first: it decides whether the failure is that bug. */
export type BugLinkKind = 'signature' | 'result' | 'case';

export interface KnownBug extends LinkedBug {
  via: BugLinkKind;
  /** The link in words: "filed for signature sig_...", "found_by test result tr_... of run otr_...". */
  how: string;
}

/** Earlier failures of each signature to look for linked results (the newest first). */
const RESULTS_PER_SIGNATURE = 50;

/** Each signature's earlier case runs (run and test case), newest first, at most 50 each. */
export async function earlierCaseRuns(
  db: Db,
  projectId: string,
  signatures: readonly string[],
  excludeRunId: string,
): Promise<Map<string, CaseRun[]>> {
  const found = new Map<string, CaseRun[]>(signatures.map((s) => [s, []]));
  if (signatures.length === 0) return found;
  const { rows } = await db.raw(
    `SELECT sig.signature, f.run_id, f.test_case_id
       FROM unnest(?::text[]) AS sig(signature)
       CROSS JOIN LATERAL (
         SELECT DISTINCT ON (occurred_at, run_id, test_case_id) run_id, test_case_id, occurred_at FROM ai_failures
          WHERE project_id = ? AND signature = sig.signature AND run_id <> ?
          ORDER BY occurred_at DESC, run_id DESC, test_case_id LIMIT ?) f`,
    [[...new Set(signatures)], projectId, excludeRunId, RESULTS_PER_SIGNATURE],
  );
  for (const r of rows) found.get(r.signature)!.push({ runId: r.run_id, testCaseId: r.test_case_id });
  return found;
}

const key = (runId: string, testCaseId: string) => `${runId}\u0000${testCaseId}`;

/**
 * The bugs of each failure (by signature and test case): those filed for the signature, those linked
 * to a test result of an earlier run of the same case that failed with the same signature (or of this
 * run), and those linked to the test case. A bug appears once per failure, by its strongest link.
 */
export function knownBugsOf(
  failure: { signature: string; testCaseId: string; runId: string },
  signatureBugs: readonly LinkedBug[],
  earlier: readonly CaseRun[],
  links: readonly BugLinkRow[],
): KnownBug[] {
  const found = new Map<string, KnownBug>();
  for (const b of signatureBugs)
    found.set(b.id, { ...b, via: 'signature', how: `filed for signature ${failure.signature}` });
  const sameCause = new Set([
    key(failure.runId, failure.testCaseId),
    ...earlier.filter((e) => e.testCaseId === failure.testCaseId).map((e) => key(e.runId, e.testCaseId)),
  ]);
  const bug = (l: BugLinkRow) => ({ id: l.bugId, title: l.title, status: l.status });
  for (const l of links) {
    if (found.has(l.bugId) || l.target !== 'test_result' || !l.runId) continue;
    if (!sameCause.has(key(l.runId, l.testCaseId))) continue;
    const when = l.runId === failure.runId ? 'this run' : `run ${l.runId}, which failed the same way`;
    found.set(l.bugId, { ...bug(l), via: 'result', how: `${l.relation} test result ${l.targetId} (${when})` });
  }
  for (const l of links) {
    if (found.has(l.bugId) || l.target !== 'test_case' || l.testCaseId !== failure.testCaseId) continue;
    found.set(l.bugId, { ...bug(l), via: 'case', how: `${l.relation} test case ${l.testCaseId}` });
  }
  return [...found.values()];
}
