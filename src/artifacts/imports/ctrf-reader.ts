// A CTRF report (Common Test Report Format, JSON) read from a bounded body: JSON.parse, then the
// fields the import needs are checked. Only when something is wrong is the text parsed again with
// jsonc-parser, which knows where each value is, so the refusal names the line and column.
import { findNodeAtLocation, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { errors } from '../../errors.js';
import { firstLine, type ImportedStatus, type ImportedTest } from './imported-test.js';

const STATUS: Record<string, ImportedStatus> = {
  passed: 'passed',
  failed: 'failed',
  skipped: 'skipped',
  pending: 'skipped',
  other: 'error',
};

/** Line and column (1-based) of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

type Path = Array<string | number>;

/** A refusal at the value `path` names (its start), or at the start of the file when it is absent. */
function refuse(text: string, message: string, path: Path): never {
  const node = findNodeAtLocation(parseTree(text)!, path) ?? findNodeAtLocation(parseTree(text)!, path.slice(0, -1));
  const { line, column } = lineColumn(text, node?.offset ?? 0);
  throw errors.malformedFile(`Not a CTRF report: ${message}`, line, column);
}

export function readCtrf(text: string): ImportedTest[] {
  const doc = parseJson(text);
  const results = (doc as { results?: { tests?: unknown } } | null)?.results;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) refuse(text, 'the document is not an object', []);
  if (typeof results !== 'object' || results === null) refuse(text, '"results" is missing', ['results']);
  const tests = results.tests;
  if (!Array.isArray(tests)) refuse(text, '"results.tests" is not an array', ['results', 'tests']);
  return tests.map((raw, i) => importedTest(checkedTest(text, raw, i)));
}

/** The JSON text parsed; text that is not JSON is refused at its first problem. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const problems: ParseError[] = [];
    parseTree(text, problems, { disallowComments: true, allowTrailingComma: false });
    const first = problems[0] ?? { error: 0, offset: text.length, length: 0 };
    const { line, column } = lineColumn(text, first.offset);
    throw errors.malformedFile(
      `Not well-formed JSON: ${problems[0] ? printParseErrorCode(first.error) : 'unexpected end'}`,
      line,
      column,
    );
  }
}

/** A test of the report whose name, status and duration hold what the import needs. */
interface CheckedTest {
  fields: Record<string, unknown> & { name: string };
  status: ImportedStatus;
}

/** Test `i` of the report, or a refusal naming where it is wrong. */
function checkedTest(text: string, raw: unknown, i: number): CheckedTest {
  const at = (field: string): Path => ['results', 'tests', i, field];
  if (typeof raw !== 'object' || raw === null) refuse(text, `test ${i} is not an object`, ['results', 'tests', i]);
  const t = raw as Record<string, unknown>;
  if (typeof t.name !== 'string' || !t.name) refuse(text, `test ${i} has no name`, at('name'));
  const status = STATUS[String(t.status)];
  if (!status)
    refuse(
      text,
      `test ${i} has status ${JSON.stringify(t.status)}, not passed, failed, skipped, pending or other`,
      at('status'),
    );
  if (t.duration !== undefined && !(typeof t.duration === 'number' && t.duration >= 0))
    refuse(text, `test ${i} has a duration that is not a number of ms`, at('duration'));
  return { fields: t as CheckedTest['fields'], status };
}

function importedTest({ fields: t, status }: CheckedTest): ImportedTest {
  const suite = Array.isArray(t.suite)
    ? t.suite.map(String)
    : typeof t.suite === 'string'
      ? t.suite.split(' > ')
      : undefined;
  const retries =
    typeof t.retries === 'number' ? t.retries : Array.isArray(t.retryAttempts) ? t.retryAttempts.length : undefined;
  const message = firstLine(typeof t.message === 'string' ? t.message : undefined);
  return {
    name: t.name,
    ...(typeof t.filePath === 'string' ? { file: t.filePath } : {}),
    ...(suite?.length ? { suite } : {}),
    status,
    ...(message ? { message } : {}),
    ...(typeof t.duration === 'number' ? { durationMs: Math.round(t.duration) } : {}),
    ...(t.flaky === true && status === 'passed' ? { flaky: true } : {}),
    ...(retries ? { retries } : {}),
  };
}
