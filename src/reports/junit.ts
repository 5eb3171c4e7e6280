// A run as JUnit XML, the format GitHub's, GitLab's and Jenkins' test reports read: one testsuite
// for the run, one testcase per test case (classname: the plan or "otp", name: its title, file: its
// id, time in seconds), by the case's outcome (machines/case-outcome.ts): <failure> for failed (a check
// did not hold) and <error> for error (a step could not be performed), both with the error code as
// type and its message, <skipped> for a case skipped or cancelled, <flakyFailure> for each attempt
// that failed before the last (the Maven Surefire extension that
// GitLab and Jenkins read), and the screenshots as [[ATTACHMENT|url]] lines in <system-out>, which
// GitLab and the report actions of GitHub turn into links.
import { type CaseResult, type Report, type ReportedRun, runReport } from './case-results.js';

// XML 1.0 has no place for most control characters, even escaped: they are left out.
const INVALID_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function text(value: string): string {
  return value.replace(INVALID_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function attr(value: string | number): string {
  return text(String(value))
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** `baseUrl`: the service's address, to make the run's and the screenshots' links absolute. */
export function runToJunit(run: ReportedRun, baseUrl: string): string {
  return reportToJunit(runReport(run), baseUrl);
}

export function reportToJunit(report: Report, baseUrl: string): string {
  const { cases } = report;
  const count = (outcome: string) => cases.filter((c) => c.outcome === outcome).length;
  const timestamp = (report.startedAt ?? new Date().toISOString()).replace(/\.\d+Z$/, '');
  const totals = `tests="${cases.length}" failures="${count('failed')}" errors="${count('error') + count('pending')}" skipped="${count('skipped') + count('cancelled')}" time="${seconds(report.durationMs)}"`;
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${attr(report.name)}" ${totals}>`,
  ];
  out.push(`  <testsuite name="${attr(report.name)}" ${totals} timestamp="${attr(timestamp)}">`);
  out.push('    <properties>');
  out.push(`      <property name="runId" value="${attr(report.id)}"/>`);
  out.push(`      <property name="status" value="${attr(report.status)}"/>`);
  out.push(`      <property name="url" value="${attr(`${baseUrl}${report.path}`)}"/>`);
  if (report.reason) out.push(`      <property name="reason" value="${attr(report.reason)}"/>`);
  out.push('    </properties>');
  for (const c of cases) out.push(...testcaseLines(report, c, baseUrl));
  out.push('  </testsuite>', '</testsuites>', '');
  return out.join('\n');
}

/** One <testcase>: its outcome's element, its earlier failed attempts, its lines and screenshots. */
function testcaseLines(report: Report, c: CaseResult, baseUrl: string): string[] {
  const out = [
    `    <testcase classname="${attr(report.classname)}" name="${attr(c.title)}" file="${attr(c.id)}" time="${seconds(c.durationMs)}">`,
  ];
  // A quarantined case reports its failure as it is; the property and the message say it did not fail the run.
  if (c.quarantined) out.push('      <properties><property name="quarantined" value="true"/></properties>');
  const outcome = outcomeElement(report, c);
  if (outcome) out.push(`      ${outcome}`);
  for (const f of c.failedAttempts)
    out.push(`      <flakyFailure message="${attr(f.message)}" type="${attr(f.code)}"/>`);
  const attachments = c.screenshots.map((url) => `[[ATTACHMENT|${baseUrl}${url}]]`);
  out.push(`      <system-out>${text([...c.lines, ...attachments].join('\n'))}</system-out>`);
  out.push('    </testcase>');
  return out;
}

/** <failure>, <error> or <skipped> by the case's outcome; none for a pass. */
function outcomeElement(report: Report, c: CaseResult): string | undefined {
  const detail = text(c.lines.join('\n'));
  if (c.outcome === 'failed' || c.outcome === 'error') {
    const tag = c.outcome === 'failed' ? 'failure' : 'error';
    const message = c.quarantined ? `quarantined (does not fail the run): ${c.failure!.message}` : c.failure!.message;
    return `<${tag} message="${attr(message)}" type="${attr(c.failure!.code)}">${detail}</${tag}>`;
  }
  if (c.outcome === 'pending')
    return `<error message="the run ended before this case finished" type="${attr(report.status)}">${detail}</error>`;
  if (c.outcome === 'skipped' || c.outcome === 'cancelled') {
    const why = c.skipReason ?? report.reason ?? (c.outcome === 'cancelled' ? 'cancelled' : 'not run');
    return `<skipped message="${attr(why)}"/>`;
  }
  return undefined;
}
