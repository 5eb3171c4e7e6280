// What `otp run` prints while it waits: one line per test case as it ends (plain lines, as CI logs
// want them), and in a terminal a bar of the steps done, redrawn in place under those lines.
import { type CaseResult, caseResults, type ReportedRun } from '../reports/case-results.js';
import { type QueueStanding, queueLine } from './queue-line.js';

const FINAL = new Set(['passed', 'failed', 'cancelled', 'error']);
const MARK: Record<CaseResult['outcome'], string> = {
  passed: 'PASS',
  failed: 'FAIL',
  error: 'ERROR',
  cancelled: 'CANCELLED',
  skipped: 'SKIP',
  pending: '....',
  flaky: 'FLAKY',
};

export class Progress {
  private printed = 0;
  private barShown = false;
  private lastQueueLine = '';

  constructor(
    private readonly write: (text: string) => void,
    private readonly tty: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  line(text: string): void {
    this.clearBar();
    this.write(`${text}\n`);
  }

  /** The run as it now stands: the cases that ended since the last call get their line. */
  update(run: ReportedRun & { queue?: QueueStanding }): void {
    if (run.status === 'queued' && run.queue) {
      // Said again only when it changes, so a CI log gets a line per change, not per poll.
      const text = queueLine(run.queue, this.now());
      if (text !== this.lastQueueLine) this.line(text);
      this.lastQueueLine = text;
      return;
    }
    const cases = caseResults(run);
    // Cases end in order; a case is reported once all before it are.
    while (
      this.printed < cases.length &&
      cases[this.printed]!.outcome !== 'pending' &&
      this.ended(run, this.printed, cases[this.printed]!)
    ) {
      this.line(caseLine(cases[this.printed]!));
      this.printed++;
    }
    if (this.tty) this.bar(run);
  }

  /** The cases not reported yet (the run ended before them), at the end. */
  finish(run: ReportedRun): void {
    const cases = caseResults(run);
    for (; this.printed < cases.length; this.printed++) this.line(caseLine(cases[this.printed]!));
    this.clearBar();
  }

  private ended(run: ReportedRun, caseIndex: number, result: CaseResult): boolean {
    const steps = run.steps.filter((s) => s.caseIndex === caseIndex);
    if (steps.some((s) => s.status === 'pending')) return false;
    if (result.outcome === 'passed' || result.outcome === 'flaky' || result.outcome === 'skipped') return true;
    // A failed attempt with retries left runs again (--retries), unless the run moved on or is over.
    const attempt = Math.max(1, ...steps.map((s) => s.attempt ?? 1));
    if (attempt > (run.testCases[caseIndex]?.retries ?? 0)) return true;
    return FINAL.has(run.status) || run.steps.some((s) => s.caseIndex > caseIndex && s.status !== 'pending');
  }

  private bar(run: ReportedRun): void {
    const done = run.steps.filter((s) => s.status !== 'pending').length;
    const width = 30;
    const filled = run.steps.length ? Math.round((done / run.steps.length) * width) : 0;
    this.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${run.steps.length} steps, ${run.status}`,
    );
    this.barShown = true;
  }

  private clearBar(): void {
    if (!this.barShown) return;
    this.write('\r\u001b[2K');
    this.barShown = false;
  }
}

function caseLine(c: CaseResult): string {
  const time = `${(c.durationMs / 1000).toFixed(1)} s`;
  const why = c.failure ? ` — ${c.failure.step ?? 'a step'}: ${c.failure.code}: ${c.failure.message}` : '';
  return `${MARK[c.outcome]}  ${c.title} (${c.id}, ${time})${why}`;
}
