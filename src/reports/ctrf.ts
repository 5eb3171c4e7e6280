// A run as a CTRF report (Common Test Report Format, JSON; its schema ships in the `ctrf` package and
// the tests check against it): one test per test case, with the browser that ran it, its retries
// (retryAttempts, flaky) and its evidence as attachments (links to the service, which need a key or a
// signed link to open).
import { type CaseOutcome, type Report, type ReportedRun, runReport } from './case-results.js';

// CTRF's statuses for each case outcome (machines/case-outcome.ts); rawStatus keeps the outcome itself.
const STATUS = {
  passed: 'passed',
  flaky: 'passed',
  failed: 'failed',
  error: 'failed',
  cancelled: 'skipped',
  skipped: 'skipped',
  pending: 'pending',
} as const satisfies Record<CaseOutcome, string>;

export interface CtrfOptions {
  /** The service's address, to make the links absolute. */
  baseUrl: string;
  /** The executor that ran the run (its name and version), when known. */
  browser?: string;
  /** The report's own name (the CI job, say). */
  reportName?: string;
}

export function runToCtrf(run: ReportedRun, options: CtrfOptions) {
  return reportToCtrf(runReport(run), options);
}

export function reportToCtrf(report: Report, options: CtrfOptions) {
  const { cases } = report;
  const start = Date.parse(report.startedAt ?? '') || Date.now();
  const stop = Date.parse(report.finishedAt ?? '') || start + report.durationMs;
  const tests = cases.map((c) => ({
    name: c.title,
    testId: c.id,
    status: STATUS[c.outcome],
    rawStatus: c.outcome,
    duration: Math.round(c.durationMs),
    filePath: c.id,
    suite: [report.classname],
    ...(c.failure ? { message: `${c.failure.code}: ${c.failure.message}`, trace: c.lines.join('\n') } : {}),
    retries: Math.max(0, c.attempts - 1),
    flaky: c.outcome === 'flaky',
    // A quarantined case keeps its status; the tag says its failure did not fail the run's verdict.
    ...(c.quarantined ? { tags: ['quarantined'], extra: { quarantined: true } } : {}),
    ...(c.failedAttempts.length
      ? {
          retryAttempts: c.failedAttempts.map((f, i) => ({
            attempt: f.attempt ?? i + 1,
            status: 'failed',
            message: `${f.code}: ${f.message}`,
          })),
        }
      : {}),
    ...(options.browser ? { browser: options.browser } : {}),
    ...(c.screenshots.length
      ? {
          attachments: c.screenshots.map((url, i) => ({
            name: `screenshot ${i + 1}`,
            contentType: 'image/png',
            path: `${options.baseUrl}${url}`,
          })),
        }
      : {}),
    stdout: c.lines,
  }));
  const count = (status: string) => tests.filter((t) => t.status === status).length;
  return {
    reportFormat: 'CTRF',
    specVersion: '0.0.0',
    runId: report.id,
    timestamp: new Date(stop).toISOString(),
    generatedBy: 'otp-service',
    results: {
      tool: { name: 'otp-service' },
      summary: {
        tests: tests.length,
        passed: count('passed'),
        failed: count('failed'),
        skipped: count('skipped'),
        pending: count('pending'),
        other: count('other'),
        flaky: tests.filter((t) => t.flaky).length,
        start,
        stop,
        duration: Math.max(0, stop - start),
      },
      tests,
      environment: {
        ...(options.reportName ? { reportName: options.reportName } : {}),
        extra: {
          runId: report.id,
          status: report.status,
          url: `${options.baseUrl}${report.path}`,
          ...(report.cases.some((c) => c.quarantined)
            ? { quarantined: report.cases.filter((c) => c.quarantined).map((c) => c.id) }
            : {}),
        },
      },
    },
  };
}
