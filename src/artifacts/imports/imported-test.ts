// One test as another tool reported it (a JUnit <testcase>, a CTRF test), before it is matched to a
// test case: what the readers (junit-reader.ts, ctrf-reader.ts) hand to the import (import-service.ts).

export type ImportedStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface ImportedTest {
  name: string;
  /** JUnit classname (Surefire: the class; pytest: the module; Playwright: the file). */
  classname?: string;
  file?: string;
  /** The suites it is in, outermost first. */
  suite?: string[];
  status: ImportedStatus;
  /** The failure's, error's or skip's message (its first line when only a text was given). */
  message?: string;
  durationMs?: number;
  /** It passed after failing (JUnit <flakyFailure>, CTRF flaky). */
  flaky?: boolean;
  /** Earlier failed attempts, when the tool retried it. */
  retries?: number;
}

/**
 * The test's identity in its tool, kept in test_case_mappings so a later import finds the case: where
 * it is (classname, else file, else its suites) and its name. Two tests of one file with the same
 * identity are one test run twice.
 */
export function externalKey(test: ImportedTest): string {
  const where = test.classname || test.file || (test.suite ?? []).join(' > ');
  return `${where}::${test.name}`.slice(0, 1000);
}

const CASE_ID = /\btc_[0-9a-z]{26}\b/;

/** A test-case id written in the test's name (or classname): `checkout works [tc_01j...]`. */
export function caseIdIn(test: ImportedTest): string | undefined {
  return CASE_ID.exec(test.name)?.[0] ?? (test.classname ? CASE_ID.exec(test.classname)?.[0] : undefined);
}

/** The first line of a message, at most 2000 characters (a stack trace's text is not kept whole). */
export function firstLine(text: string | undefined): string | undefined {
  const line = text?.trim().split(/\r?\n/, 1)[0]?.trim();
  return line ? line.slice(0, 2000) : undefined;
}
