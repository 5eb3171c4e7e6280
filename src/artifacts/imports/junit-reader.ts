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

  const suites: string[] = [];
  let current: (ImportedTest & { text?: string; capture?: boolean }) | undefined;
  let sawRoot = false;
  let out: ImportedTest[] = [];

  parser.on('opentag', (tag) => {
    const a = tag.attributes as Record<string, string>;
    if (!sawRoot) {
      sawRoot = true;
      if (tag.name !== 'testsuites' && tag.name !== 'testsuite')
        fail(`Not a JUnit report: the root element is <${tag.name}>, not <testsuites> or <testsuite>`);
    }
    switch (tag.name) {
      case 'testsuite':
        suites.push(a.name ?? '');
        break;
      case 'testcase': {
        if (!a.name) return fail('A <testcase> has no name attribute');
        const seconds = a.time === undefined ? undefined : Number(a.time.replace(/,/g, ''));
        if (seconds !== undefined && !(seconds >= 0))
          return fail(`A <testcase> has a time that is not a number of seconds: "${a.time}"`);
        current = {
          name: a.name,
          ...(a.classname ? { classname: a.classname } : {}),
          ...(a.file ? { file: a.file } : {}),
          suite: suites.filter(Boolean),
          status: 'passed',
          ...(seconds !== undefined ? { durationMs: Math.round(seconds * 1000) } : {}),
        };
        break;
      }
      case 'failure':
      case 'error':
      case 'skipped':
        if (!current) return;
        // A failure outranks an error outranks a skip, whatever order they come in.
        if (rank(tag.name) > rank(current.status)) {
          current.status = tag.name === 'failure' ? 'failed' : (tag.name as ImportedStatus);
          current.message = firstLine(a.message);
          current.capture = !current.message;
          current.text = '';
        }
        break;
      case 'flakyFailure':
      case 'flakyError':
        if (current) {
          current.flaky = true;
          current.retries = (current.retries ?? 0) + 1;
        }
        break;
      case 'rerunFailure':
      case 'rerunError':
        if (current) current.retries = (current.retries ?? 0) + 1;
        break;
    }
  });
  parser.on('text', (text) => {
    if (current?.capture && (current.text?.length ?? 0) < 4000) current.text += text;
  });
  parser.on('cdata', (text) => {
    if (current?.capture && (current.text?.length ?? 0) < 4000) current.text += text;
  });
  parser.on('closetag', (tag) => {
    if (tag.name === 'testsuite') suites.pop();
    else if (current && (tag.name === 'failure' || tag.name === 'error' || tag.name === 'skipped')) {
      if (current.capture) current.message = firstLine(current.text);
      current.capture = false;
    } else if (tag.name === 'testcase' && current) {
      const { text: _text, capture: _capture, ...test } = current;
      if (test.flaky && test.status !== 'passed') delete test.flaky;
      out.push(test);
      current = undefined;
    }
  });

  // A character split between two chunks is decoded whole (stream: true).
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) {
    parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    while (out.length >= batch) yield out.splice(0, batch);
  }
  parser.write(decoder.decode());
  parser.close();
  if (failure) throw failure;
  if (!sawRoot) throw errors.malformedFile('The file is empty: no JUnit report in it', parser.line, parser.column);
  if (out.length) yield out;
  out = [];
}

const RANK: Record<string, number> = { passed: 0, skipped: 1, error: 2, failure: 3, failed: 3 };
const rank = (name: string) => RANK[name] ?? 0;
