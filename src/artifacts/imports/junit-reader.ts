// JUnit XML as Playwright, Jest (jest-junit), pytest and Maven Surefire write it, read as a stream
// with saxes (a SAX parser: the file is never held whole): each <testcase> becomes an ImportedTest
// once its end tag is read. Any <testsuite> nesting, a bare <testsuite> root or <testsuites>.
// A file that is not well-formed XML, or not JUnit, is refused with its line and column.
import { SaxesParser } from 'saxes';
import { errors } from '../../errors.js';
import { firstLine, type ImportedStatus, type ImportedTest } from './imported-test.js';

/** Reads `chunks` and answers the tests in batches of up to `batch` (a batch after each chunk that completed some). */
export async function* readJunit(chunks: AsyncIterable<Buffer | string>, batch = 500): AsyncGenerator<ImportedTest[]> {
  const parser = new SaxesParser({ position: true });
  let failure: Error | undefined;
  const fail = (message: string) => {
    // saxes' column counts from 0 at the character it stopped after; readers count from 1.
    failure ??= errors.malformedFile(message, parser.line, parser.column);
  };
  parser.on('error', (err) => fail(`Not well-formed XML: ${err.message.replace(/^\d+:\d+: /, '')}`));
  const cases = new JunitCases(fail);
  parser.on('opentag', (tag) => cases.open(tag.name, tag.attributes as Record<string, string>));
  parser.on('text', (text) => cases.text(text));
  parser.on('cdata', (text) => cases.text(text));
  parser.on('closetag', (tag) => cases.close(tag.name));

  // A character split between two chunks is decoded whole (stream: true).
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) {
    parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    while (cases.read.length >= batch) yield cases.read.splice(0, batch);
  }
  parser.write(decoder.decode());
  parser.close();
  if (failure) throw failure;
  if (!cases.sawRoot)
    throw errors.malformedFile('The file is empty: no JUnit report in it', parser.line, parser.column);
  if (cases.read.length) yield cases.read;
}

/** A <testcase> being read, with the text of its outcome while its message is taken from it. */
type OpenCase = ImportedTest & { text?: string; capture?: boolean };

/** The tests of a JUnit report, built as its tags are read; `fail` refuses the file where the parser is. */
class JunitCases {
  /** The tests read whole, not yet taken. */
  readonly read: ImportedTest[] = [];
  sawRoot = false;
  private readonly suites: string[] = [];
  private current: OpenCase | undefined;

  constructor(private readonly fail: (message: string) => void) {}

  open(name: string, a: Record<string, string>): void {
    if (!this.sawRoot) {
      this.sawRoot = true;
      if (name !== 'testsuites' && name !== 'testsuite')
        this.fail(`Not a JUnit report: the root element is <${name}>, not <testsuites> or <testsuite>`);
    }
    if (name === 'testsuite') this.suites.push(a.name ?? '');
    else if (name === 'testcase') this.openCase(a);
    else if (this.current) this.mark(this.current, name, a);
  }

  private openCase(a: Record<string, string>): void {
    if (!a.name) return this.fail('A <testcase> has no name attribute');
    const seconds = a.time === undefined ? undefined : Number(a.time.replace(/,/g, ''));
    if (seconds !== undefined && !(seconds >= 0))
      return this.fail(`A <testcase> has a time that is not a number of seconds: "${a.time}"`);
    this.current = {
      name: a.name,
      ...(a.classname ? { classname: a.classname } : {}),
      ...(a.file ? { file: a.file } : {}),
      suite: this.suites.filter(Boolean),
      status: 'passed',
      ...(seconds !== undefined ? { durationMs: Math.round(seconds * 1000) } : {}),
    };
  }

  /** An element inside a <testcase>: its outcome, or an attempt before the last that failed. */
  private mark(current: OpenCase, name: string, a: Record<string, string>): void {
    switch (name) {
      case 'failure':
      case 'error':
      case 'skipped':
        // A failure outranks an error outranks a skip, whatever order they come in.
        if (rank(name) > rank(current.status)) {
          current.status = name === 'failure' ? 'failed' : (name as ImportedStatus);
          current.message = firstLine(a.message);
          current.capture = !current.message;
          current.text = '';
        }
        break;
      case 'flakyFailure':
      case 'flakyError':
        current.flaky = true;
        current.retries = (current.retries ?? 0) + 1;
        break;
      case 'rerunFailure':
      case 'rerunError':
        current.retries = (current.retries ?? 0) + 1;
        break;
    }
  }

  text(text: string): void {
    const current = this.current;
    if (current?.capture && (current.text?.length ?? 0) < 4000) current.text += text;
  }

  close(name: string): void {
    const current = this.current;
    if (name === 'testsuite') this.suites.pop();
    else if (current && (name === 'failure' || name === 'error' || name === 'skipped')) {
      if (current.capture) current.message = firstLine(current.text);
      current.capture = false;
    } else if (name === 'testcase' && current) {
      const { text: _text, capture: _capture, ...test } = current;
      if (test.flaky && test.status !== 'passed') delete test.flaky;
      this.read.push(test);
      this.current = undefined;
    }
  }
}

const RANK: Record<string, number> = { passed: 0, skipped: 1, error: 2, failure: 3, failed: 3 };
const rank = (name: string) => RANK[name] ?? 0;
