// The triage rules: a failed test case's facts in, a category with its reasons out. Pure and
// deterministic (the same facts, the same answer), tried in a fixed order, the first that holds wins:
// a person's correction, a project rule, an open bug of the signature, the environment, a flaky
// history, a drifted locator, and a product regression for a failure the product itself answered.

import { type LinkedBug, OPEN_BUG_STATUSES } from './bugs.js';
import type { Correction, TriageRule } from './judgements.js';
import { patternMatcher } from './judgements.js';
import type { SuggestedAction, TriageCategory } from './schemas.js';

export interface TriedCount {
  describe: string;
  count: number | undefined;
}

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
  /** The case's earlier outcomes, newest first: passed or failed (other outcomes left out). */
  history: Array<'passed' | 'failed'>;
  /** Earlier failures of this signature in the project. */
  earlierOfSignature: number;
  bugs: LinkedBug[];
  correction?: Correction;
  rules: TriageRule[];
}

export interface Verdict {
  category: TriageCategory;
  confidence: number;
  decidedBy: 'correction' | 'rule' | 'facts';
  reasons: string[];
  suggestedAction: SuggestedAction;
}

const ACTION_OF: Record<TriageCategory, SuggestedAction> = {
  product_regression: 'file_bug',
  locator_drift: 'accept_healing',
  environment: 're_run',
  flaky: 'quarantine',
  known_issue: 'follow_bug',
};

const ENVIRONMENT_MESSAGE =
  /net::ERR_|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|could not connect|browser has been closed|Target (page|crashed|closed)|executor (was )?lost|connection (was )?lost|socket hang up/i;

/** Outcome changes between consecutive runs, the current failure included (history is newest first). */
export function flips(history: ReadonlyArray<'passed' | 'failed'>): number {
  const sequence = ['failed', ...history];
  let n = 0;
  for (let i = 1; i < sequence.length; i++) if (sequence[i] !== sequence[i - 1]) n++;
  return n;
}

const HISTORY_SHOWN = 10;
const round = (x: number) => Math.round(x * 100) / 100;

/** Whether a failure's code and message alone say the environment failed (history leaves such runs out). */
export function environmental(code: string, message: string): boolean {
  return code === 'E_NAVIGATION_BLOCKED' || ENVIRONMENT_MESSAGE.test(message);
}

function environment(f: CaseFacts): string[] | undefined {
  if (f.code === 'E_NAVIGATION_BLOCKED')
    return [`the navigation was blocked (${f.code}): the page went to an origin the run does not allow`];
  if (f.source === 'service' && f.code === 'E_INTERNAL')
    return ['the service ended the step itself: the executor was lost or stopped answering'];
  if (ENVIRONMENT_MESSAGE.test(f.message))
    return [`the message says the page or the browser could not be reached: "${f.message.slice(0, 160)}"`];
  if (f.code === 'E_TIMEOUT' && (f.action === 'navigate' || f.tried.length === 0)) {
    return [
      `the step timed out (${f.code}) ${f.action === 'navigate' ? 'loading the page' : 'without a locator to blame'}`,
    ];
  }
  if (f.runStatus === 'error' && f.runReason) return [`the run itself ended in error: ${f.runReason.slice(0, 160)}`];
  return undefined;
}

function drift(f: CaseFacts): { confidence: number; reasons: string[]; action: SuggestedAction } | undefined {
  if (f.tried.length === 0) return undefined;
  const [first, ...rest] = f.tried;
  const counts = f.tried.map(
    (t, i) =>
      `candidate ${i + 1} (${t.describe}) matched ${t.count ?? 'an unknown number of'} element${t.count === 1 ? '' : 's'}`,
  );
  const other = rest.findIndex((t) => (t.count ?? 0) >= 1);
  if (first!.count === 0 && other >= 0) {
    return {
      confidence: 0.9,
      reasons: [`the first candidate matched nothing while another did: ${counts.join('; ')}`],
      action: 'accept_healing',
    };
  }
  if ((first!.count ?? 0) > 1)
    return { confidence: 0.75, reasons: [`the locator is ambiguous: ${counts.join('; ')}`], action: 'update_test' };
  if (f.tried.every((t) => t.count === 0) && !f.elementFound) {
    return {
      confidence: 0.7,
      reasons: [`no candidate found the element: ${counts.join('; ')}`],
      action: 'update_test',
    };
  }
  return undefined;
}

export function classify(f: CaseFacts): Verdict {
  const history = f.history.slice(0, HISTORY_SHOWN);
  const said = history.length
    ? `the case's last ${history.length} earlier outcomes, newest first: ${history.join(', ')}`
    : 'the case has no earlier outcome';
  if (f.correction) {
    return {
      category: f.correction.category,
      confidence: 1,
      decidedBy: 'correction',
      suggestedAction: ACTION_OF[f.correction.category],
      reasons: [
        `a person set ${f.correction.category} for signature ${f.signature}${f.correction.note ? `: ${f.correction.note}` : ''}`,
      ],
    };
  }
  for (const rule of f.rules) {
    const text = rule.field === 'signature' ? f.signature : f.message;
    if (patternMatcher(rule.pattern)(text)) {
      return {
        category: rule.category,
        confidence: 0.95,
        decidedBy: 'rule',
        suggestedAction: ACTION_OF[rule.category],
        reasons: [
          `project rule ${rule.id}: the ${rule.field} matches "${rule.pattern}"${rule.note ? ` (${rule.note})` : ''}`,
        ],
      };
    }
  }
  const open = f.bugs.filter((b) => OPEN_BUG_STATUSES.has(b.status ?? ''));
  if (open.length) {
    return {
      category: 'known_issue',
      confidence: 0.9,
      decidedBy: 'facts',
      suggestedAction: 'follow_bug',
      reasons: [
        `bug ${open.map((b) => `${b.id} (${b.status}${b.title ? `: ${b.title}` : ''})`).join(', ')} was filed for this signature and is still ${open[0]!.status}`,
      ],
    };
  }
  const closedBugs = f.bugs.length
    ? [
        `bug ${f.bugs.map((b) => `${b.id} (${b.status})`).join(', ')} was filed for this signature and is no longer open, yet it fails again`,
      ]
    : [];
  const env = environment(f);
  if (env)
    return {
      category: 'environment',
      confidence: 0.85,
      decidedBy: 'facts',
      suggestedAction: 're_run',
      reasons: [...env, said],
    };
  const changes = flips(history);
  if (changes >= 2) {
    return {
      category: 'flaky',
      confidence: round(Math.min(0.95, 0.5 + 0.1 * changes)),
      decidedBy: 'facts',
      suggestedAction: 'quarantine',
      reasons: [`the outcome changed ${changes} times over the last ${history.length + 1} runs of this case (${said})`],
    };
  }
  const drifted = drift(f);
  if (drifted) {
    return {
      category: 'locator_drift',
      confidence: drifted.confidence,
      decidedBy: 'facts',
      suggestedAction: drifted.action,
      reasons: [...drifted.reasons, said, ...closedBugs],
    };
  }
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
  if (history.length && history[0] === 'passed') reasons.push(`it passed on its previous run (${said})`);
  else reasons.push(said);
  if (f.earlierOfSignature === 0) reasons.push('this signature is new: no earlier failure had it');
  return {
    category: 'product_regression',
    confidence,
    decidedBy: 'facts',
    suggestedAction: 'file_bug',
    reasons: [...reasons, ...closedBugs],
  };
}
