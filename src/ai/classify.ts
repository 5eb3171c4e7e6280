// The triage rules: a failed test case's facts in, a category with its reasons out. Pure and
// deterministic (the same facts, the same answer), tried in a fixed order, the first that holds wins:
// a person's correction, a project rule, an open bug of the signature (or of an earlier result that
// failed the same way), the environment, an open bug of the test case, a pass on a retry, a flaky
// history, a page still loading, a drifted locator, and a product regression for a failure the
// product itself answered.
// Every other rule that holds is kept as an alternative: a low-confidence answer says "uncertain" and
// names the two likeliest categories with their reasons.

import type { KnownBug } from './bug-links.js';
import { OPEN_BUG_STATUSES } from './bugs.js';
import { type Navigation, navigationFailure, textFailure } from './environment.js';
import type { Correction, TriageRule } from './judgements.js';
import { patternMatcher } from './judgements.js';
import type { SuggestedAction, TriageCategory } from './schemas.js';

export interface TriedCount {
  describe: string;
  count: number | undefined;
}

/** A case's outcome in an earlier run: passed, failed, or flaky (it passed on a retry). */
export type EarlierOutcome = 'passed' | 'failed' | 'flaky';

export interface CaseFacts {
  signature: string;
  code: string;
  message: string;
  /** The step's action (assert:text for an assert of kind text). */
  action: string;
  /** Who ended the step: the executor, or the service (a lost executor, a step time-out). */
  source: 'executor' | 'service' | null;
  /** The candidates the executor tried, in order, with how many elements each matched. */
  tried: TriedCount[];
  /** The element the step acted on or observed, when one was found. */
  elementFound: boolean;
  actual: string | null;
  consoleErrors: number;
  runStatus: string;
  runReason: string | null;
  /** The case's earlier outcomes, newest first (cancelled and skipped left out). */
  history: EarlierOutcome[];
  /** Earlier failures of this signature in the project. */
  earlierOfSignature: number;
  /** Bugs of the failure, each by its strongest link (a bug without `via` was filed for the signature). */
  bugs: Array<Omit<KnownBug, 'via' | 'how'> & Partial<Pick<KnownBug, 'via' | 'how'>>>;
  /** Main-document navigations of the case's steps up to the failed one, in order. */
  navigations?: Navigation[];
  /** How many times this run ran the case (1 without retries); every attempt failed. */
  attempts?: number;
  correction?: Correction;
  rules: TriageRule[];
}

export interface Alternative {
  category: TriageCategory;
  confidence: number;
  reasons: string[];
}

export interface Verdict {
  category: TriageCategory;
  confidence: number;
  decidedBy: 'correction' | 'rule' | 'facts';
  reasons: string[];
  suggestedAction: SuggestedAction;
  /** The confidence is under UNCERTAIN_BELOW: the answer names its two likeliest categories. */
  uncertain: boolean;
  /** On an uncertain answer, the two likeliest categories, the answer's first. */
  alternatives: Alternative[];
}

interface Candidate extends Alternative {
  action: SuggestedAction;
}

/** Under this confidence an answer says it is uncertain (docs/ai.md, calibration). */
export const UNCERTAIN_BELOW = 0.6;

const ACTION_OF: Record<TriageCategory, SuggestedAction> = {
  product_regression: 'file_bug',
  locator_drift: 'accept_healing',
  environment: 're_run',
  flaky: 'quarantine',
  known_issue: 'follow_bug',
};

const isRetried = (o: EarlierOutcome) => o === 'flaky';

/** Outcome changes between consecutive runs, the current failure included (history is newest first). */
export function flips(history: ReadonlyArray<EarlierOutcome>): number {
  const sequence = ['failed', ...history.map((o) => (isRetried(o) ? 'passed' : o))];
  let n = 0;
  for (let i = 1; i < sequence.length; i++) if (sequence[i] !== sequence[i - 1]) n++;
  return n;
}

const HISTORY_SHOWN = 10;
const round = (x: number) => Math.round(x * 100) / 100;
const bugWords = (b: CaseFacts['bugs'][number]) =>
  `${b.id} (${b.status}${b.title ? `: ${b.title}` : ''}; ${b.how ?? 'filed for this signature'})`;
const isOpen = (b: CaseFacts['bugs'][number]) => OPEN_BUG_STATUSES.has(b.status ?? '');
const viaOf = (b: CaseFacts['bugs'][number]) => b.via ?? 'signature';

/** An open bug linked to the signature or to an earlier result that failed the same way: this failure is that bug. */
function knownIssue(f: CaseFacts, strength: 'cause' | 'case'): Candidate | undefined {
  const open = f.bugs.filter((b) => isOpen(b) && (strength === 'case' ? viaOf(b) === 'case' : viaOf(b) !== 'case'));
  if (!open.length) return undefined;
  const reason =
    strength === 'cause'
      ? `bug ${open.map(bugWords).join(', ')} is still ${open[0]!.status}: this failure is a known issue`
      : `bug ${open.map(bugWords).join(', ')} is linked to the test case and still ${open[0]!.status}`;
  return {
    category: 'known_issue',
    confidence: strength === 'cause' ? 0.9 : 0.8,
    reasons: [reason],
    action: 'follow_bug',
  };
}

function environmentReason(f: CaseFacts): string | undefined {
  if (f.code === 'E_NAVIGATION_BLOCKED')
    return `the navigation was blocked (${f.code}): the page went to an origin the run does not allow`;
  if (f.source === 'service' && f.code === 'E_INTERNAL')
    return 'the service ended the step itself: the executor was lost or stopped answering';
  const seen = navigationFailure(f.navigations ?? []) ?? textFailure(f.message, f.actual);
  if (seen) return seen;
  if (f.code === 'E_TIMEOUT' && (f.action === 'navigate' || f.tried.length === 0))
    return `the step timed out (${f.code}) ${f.action === 'navigate' ? 'loading the page' : 'without a locator to blame'}`;
  if (f.runStatus === 'error' && f.runReason) return `the run itself ended in error: ${f.runReason.slice(0, 160)}`;
  return undefined;
}

function environment(f: CaseFacts, said: string): Candidate | undefined {
  const reason = environmentReason(f);
  return reason ? { category: 'environment', confidence: 0.85, reasons: [reason, said], action: 're_run' } : undefined;
}

/** A pass on a retry, in this run's window of history: the strongest evidence of flakiness there is. */
function retried(f: CaseFacts, history: readonly EarlierOutcome[], said: string): Candidate | undefined {
  const n = history.filter(isRetried).length;
  if (n === 0) return undefined;
  const attempts = f.attempts ?? 1;
  return {
    category: 'flaky',
    confidence: round(Math.min(0.95, 0.85 + 0.05 * n)),
    reasons: [
      `it passed on a retry in ${n} of its last ${history.length} earlier runs: a case that passes when run again is flaky (${said})`,
      ...(attempts > 1 ? [`this run tried it ${attempts} times and every attempt failed`] : []),
    ],
    action: 'quarantine',
  };
}

function flipping(history: readonly EarlierOutcome[], said: string): Candidate | undefined {
  const changes = flips(history);
  if (changes < 2) return undefined;
  return {
    category: 'flaky',
    confidence: round(Math.min(0.95, 0.5 + 0.1 * changes)),
    reasons: [`the outcome changed ${changes} times over the last ${history.length + 1} runs of this case (${said})`],
    action: 'quarantine',
  };
}

/** The words of a page still loading: a check that read them ran before the page was ready. */
const LOADING = /^\s*(?:(?:loading|please wait|one moment|fetching)\s*(?:…|\.{3})?|…|\.{3})\s*$/i;

/**
 * A check that found the page still loading, right after a pass: a timing failure, which comes and
 * goes. Not after a failure: a page that stays loading night after night is broken, not flaky.
 */
function loading(f: CaseFacts, history: readonly EarlierOutcome[], said: string): Candidate | undefined {
  if (!f.actual || !LOADING.test(f.actual) || history[0] === 'failed') return undefined;
  return {
    category: 'flaky',
    confidence: 0.6,
    reasons: [
      `the page still showed a loading state ("${f.actual.slice(0, 60)}") when the check ran: a timing failure, which comes and goes`,
      said,
    ],
    action: 'quarantine',
  };
}

function drift(f: CaseFacts, said: string): Candidate | undefined {
  if (f.tried.length === 0) return undefined;
  const [first, ...rest] = f.tried;
  const counts = f.tried.map(
    (t, i) =>
      `candidate ${i + 1} (${t.describe}) matched ${t.count ?? 'an unknown number of'} element${t.count === 1 ? '' : 's'}`,
  );
  const found = (confidence: number, reason: string, action: SuggestedAction): Candidate => ({
    category: 'locator_drift',
    confidence,
    reasons: [reason, said],
    action,
  });
  if (first!.count === 0 && rest.some((t) => (t.count ?? 0) >= 1))
    return found(0.9, `the first candidate matched nothing while another did: ${counts.join('; ')}`, 'accept_healing');
  if ((first!.count ?? 0) > 1) return found(0.75, `the locator is ambiguous: ${counts.join('; ')}`, 'update_test');
  if (f.tried.every((t) => t.count === 0) && !f.elementFound)
    return found(0.7, `no candidate found the element: ${counts.join('; ')}`, 'update_test');
  return undefined;
}

function regression(f: CaseFacts, history: readonly EarlierOutcome[], said: string): Candidate {
  const reasons: string[] = [];
  let confidence = 0.5;
  if (f.code === 'E_ASSERT_FAILED' && f.elementFound) {
    confidence = 0.85;
    reasons.push(
      `the element was found and the check failed (${f.code})${f.actual !== null ? `: the page showed "${f.actual.slice(0, 120)}"` : ''}`,
    );
  } else {
    reasons.push(`the step failed with ${f.code}: "${f.message.slice(0, 160)}"`);
  }
  if (f.consoleErrors)
    reasons.push(
      `the browser logged ${f.consoleErrors} console error${f.consoleErrors === 1 ? '' : 's'} during the step`,
    );
  reasons.push(history.length && history[0] !== 'failed' ? `it passed on its previous run (${said})` : said);
  if (f.earlierOfSignature === 0) reasons.push('this signature is new: no earlier failure had it');
  return { category: 'product_regression', confidence, reasons, action: 'file_bug' };
}

/** What a closed bug of the same cause says: the failure it was filed for is back. */
function fixedBugReturns(f: CaseFacts): string[] {
  const closed = f.bugs.filter((b) => !isOpen(b) && viaOf(b) !== 'case');
  if (!closed.length) return [];
  return [
    `regression of a fixed bug: bug ${closed.map(bugWords).join(', ')} was filed for this failure and is no longer open, yet it fails again`,
  ];
}

/** Every rule of the facts that holds, in the order in which they are tried. */
function candidates(f: CaseFacts): Candidate[] {
  const history = f.history.slice(0, HISTORY_SHOWN);
  const said = history.length
    ? `the case's last ${history.length} earlier outcomes, newest first: ${history.join(', ')}`
    : 'the case has no earlier outcome';
  const returns = fixedBugReturns(f);
  const found = [
    knownIssue(f, 'cause'),
    environment(f, said),
    knownIssue(f, 'case'),
    retried(f, history, said),
    // A fixed bug of this failure explains its changes of outcome: fixed, then back, is not chance.
    returns.length ? undefined : flipping(history, said),
    loading(f, history, said),
    drift(f, said),
    regression(f, history, said),
  ].filter((c): c is Candidate => c !== undefined);
  if (!returns.length) return found;
  return found.map((c) =>
    c.category === 'product_regression' || c.category === 'locator_drift'
      ? {
          ...c,
          reasons: [...c.reasons, ...returns],
          action: c.category === 'product_regression' ? 'reopen_bug' : c.action,
        }
      : c,
  );
}

/** The likeliest other category when no other rule held: what the facts cannot rule out. */
function fallback(f: CaseFacts, first: Candidate): Candidate {
  const notFound = !f.elementFound && (f.code === 'E_LOCATOR_NOT_FOUND' || f.code === 'E_TIMEOUT');
  if (first.category !== 'locator_drift' && notFound) {
    return {
      category: 'locator_drift',
      confidence: 0.3,
      reasons: ['the element was not found: if the page changed on purpose, the locator needs updating'],
      action: 'update_test',
    };
  }
  return {
    category: first.category === 'flaky' ? 'product_regression' : 'flaky',
    confidence: 0.3,
    reasons: [
      first.category === 'flaky'
        ? 'a lasting change of the product would fail the same way'
        : 'nothing in its history rules out a failure that comes and goes',
    ],
    action: first.category === 'flaky' ? 'file_bug' : 'quarantine',
  };
}

const RETRY_HINT =
  're-run with retries (POST /otp/runs retries): no run in the window retried this case, and a pass on a retry is what tells a flaky failure from a lasting one';

function decide(f: CaseFacts, found: Candidate[]): Verdict {
  const first = found[0]!;
  const verdict: Verdict = {
    category: first.category,
    confidence: first.confidence,
    decidedBy: 'facts',
    reasons: first.reasons,
    suggestedAction: first.action,
    uncertain: false,
    alternatives: [],
  };
  const unretried = !f.history.some(isRetried) && (f.attempts ?? 1) <= 1;
  if (first.confidence >= UNCERTAIN_BELOW) return verdict;
  const second = found.find((c) => c.category !== first.category) ?? fallback(f, first);
  const pair = [first, second].map(({ category, confidence, reasons }) => ({ category, confidence, reasons }));
  return {
    ...verdict,
    uncertain: true,
    alternatives: pair,
    reasons: [
      `uncertain: ${pair.map((c) => `${c.category} (${c.confidence}: ${c.reasons[0]})`).join(' or ')}`,
      ...first.reasons,
      ...(unretried ? [RETRY_HINT] : []),
    ],
    suggestedAction: unretried ? 're_run_with_retries' : first.action,
  };
}

function decidedByPeople(f: CaseFacts): Verdict | undefined {
  const said = (category: TriageCategory, confidence: number, decidedBy: Verdict['decidedBy'], reason: string) => ({
    category,
    confidence,
    decidedBy,
    suggestedAction: ACTION_OF[category],
    reasons: [reason],
    uncertain: false,
    alternatives: [],
  });
  if (f.correction) {
    const { category, note } = f.correction;
    return said(
      category,
      1,
      'correction',
      `a person set ${category} for signature ${f.signature}${note ? `: ${note}` : ''}`,
    );
  }
  for (const rule of f.rules) {
    const text = rule.field === 'signature' ? f.signature : f.message;
    if (patternMatcher(rule.pattern)(text)) {
      const note = rule.note ? ` (${rule.note})` : '';
      return said(
        rule.category,
        0.95,
        'rule',
        `project rule ${rule.id}: the ${rule.field} matches "${rule.pattern}"${note}`,
      );
    }
  }
  return undefined;
}

export function classify(f: CaseFacts): Verdict {
  return decidedByPeople(f) ?? decide(f, candidates(f));
}
