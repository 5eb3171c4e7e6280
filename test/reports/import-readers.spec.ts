// The readers of imported reports: JUnit as Playwright, Jest, pytest and Maven Surefire write it (real
// shapes in fixtures/), CTRF, and malformed files refused with the line and column that are wrong.

import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { readCtrf } from '../../src/artifacts/imports/ctrf-reader.js';
import { caseIdIn, externalKey, type ImportedTest } from '../../src/artifacts/imports/imported-test.js';
import { readJunit } from '../../src/artifacts/imports/junit-reader.js';
import { AppError } from '../../src/errors.js';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8');

/** The file in chunks of `size` bytes, as a request body arrives. */
async function junit(text: string, size = 64, batch = 500): Promise<ImportedTest[]> {
  const buf = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(buf.length / size) }, (_, i) => buf.subarray(i * size, (i + 1) * size));
  const out: ImportedTest[] = [];
  for await (const tests of readJunit(Readable.from(chunks), batch)) out.push(...tests);
  return out;
}

async function refusal(work: () => Promise<unknown> | unknown): Promise<AppError> {
  try {
    await work();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('Reading imported reports', () => {
  it('reads a Playwright JUnit report: describe › title names, a failure with its message, a skip, an id in the name', async () => {
    const tests = await junit(fixture('playwright.xml'));
    expect(tests.map((t) => [t.name, t.classname, t.status, t.durationMs])).to.deep.equal([
      ['checkout › pays with a saved card [tc_01jcheckoutpaysavedcard000]', 'checkout.spec.ts', 'passed', 2113],
      ['checkout › shows the basket total', 'checkout.spec.ts', 'failed', 1520],
      ['checkout › applies a coupon', 'checkout.spec.ts', 'skipped', 0],
      ['checkout › retries the payment', 'checkout.spec.ts', 'passed', 3348],
    ]);
    expect(tests[1]!.message).to.equal('checkout.spec.ts:24:5 shows the basket total');
    expect(tests[1]!.suite).to.deep.equal(['checkout.spec.ts']);
    expect(caseIdIn(tests[0]!)).to.equal('tc_01jcheckoutpaysavedcard000');
    expect(externalKey(tests[1]!)).to.equal('checkout.spec.ts::checkout › shows the basket total');
  });

  it('reads Jest (a failure with text only), pytest (failure, skip, error) and Surefire (a bare testsuite, flakyFailure, error)', async () => {
    const jest = await junit(fixture('jest.xml'), 17);
    expect(jest.map((t) => t.status)).to.deep.equal(['passed', 'passed', 'failed']);
    expect(jest[2]!.message).to.equal('Error: expect(received).toBe(expected) // Object.is equality');
    const pytest = await junit(fixture('pytest.xml'));
    expect(pytest.map((t) => [t.name, t.status, t.message])).to.deep.equal([
      ['test_valid_login', 'passed', undefined],
      ['test_wrong_password', 'failed', "AssertionError: assert 'Welcome' in 'Wrong password'"],
      ['test_sso', 'skipped', 'SSO not configured'],
      ['test_lockout', 'error', 'failed on setup with "ConnectionRefusedError: [Errno 111] Connection refused"'],
    ]);
    const surefire = await junit(fixture('surefire.xml'));
    expect(surefire.map((t) => [t.name, t.classname, t.status, Boolean(t.flaky)])).to.deep.equal([
      ['addsTax', 'com.example.shop.PriceCalculatorTest', 'passed', false],
      ['roundsHalfUp', 'com.example.shop.PriceCalculatorTest', 'passed', true],
      ['dividesByItems', 'com.example.shop.PriceCalculatorTest', 'error', false],
    ]);
    expect(surefire[2]!.message).to.equal('/ by zero');
  });

  it('answers tests in batches as the stream goes, and keeps a character split between chunks whole', async () => {
    const cases = Array.from(
      { length: 1200 },
      (_, i) => `<testcase classname="c" name="prüfung ${i} ✓" time="0.001"/>`,
    ).join('\n');
    const batches: number[] = [];
    const buf = Buffer.from(`<testsuite name="s">${cases}</testsuite>`);
    const chunks = Array.from({ length: Math.ceil(buf.length / 7) }, (_, i) => buf.subarray(i * 7, (i + 1) * 7));
    const all: ImportedTest[] = [];
    for await (const b of readJunit(Readable.from(chunks), 500)) {
      batches.push(b.length);
      all.push(...b);
    }
    expect(batches).to.deep.equal([500, 500, 200]);
    expect(all[1199]!.name).to.equal('prüfung 1199 ✓');
  });

  it('refuses XML that is not well-formed, or not JUnit, with the line and column', async () => {
    const broken = await refusal(() =>
      junit(
        '<testsuites>\n  <testsuite name="a">\n    <testcase name="x" classname="c">\n  </testsuite>\n</testsuites>\n',
      ),
    );
    expect(broken.status).to.equal(400);
    expect(broken.details).to.include({ line: 4 });
    expect(broken.message).to.match(/^Not well-formed XML: .*\(line 4, column \d+\)$/);
    const notJunit = await refusal(() => junit('<?xml version="1.0"?>\n<html><body/></html>'));
    expect(notJunit.details).to.deep.equal({ line: 2, column: 6 });
    expect(notJunit.message).to.contain('root element is <html>');
    const noName = await refusal(() => junit('<testsuite>\n<testcase classname="a" time="1"/>\n</testsuite>'));
    expect(noName.message).to.contain('no name attribute');
    expect(noName.details).to.include({ line: 2 });
    const badTime = await refusal(() => junit('<testsuite>\n\n<testcase name="a" time="fast"/>\n</testsuite>'));
    expect(badTime.details).to.include({ line: 3 });
    const empty = await refusal(() => junit(''));
    expect(empty.message).to.contain('root element');
  });

  it('reads CTRF (flaky, retries, suite) and refuses a malformed or wrong-shaped one with the line and column', async () => {
    const tests = readCtrf(fixture('ctrf.json'));
    expect(tests.map((t) => [t.name, t.status, t.durationMs, Boolean(t.flaky)])).to.deep.equal([
      ['search finds a product', 'passed', 1203, false],
      ['search suggests as you type', 'passed', 2890, true],
      ['search handles no result', 'failed', 512, false],
    ]);
    expect(tests[2]!.message).to.equal('Expected "No results" to be visible');
    expect(externalKey(tests[0]!)).to.equal('tests/search.spec.ts::search finds a product');
    const syntax = await refusal(() =>
      readCtrf('{\n  "results": {\n    "tests": [\n      { "name": "a", "status": "passed" },,\n    ]\n  }\n}'),
    );
    expect(syntax.details).to.deep.equal({ line: 4, column: 43 }); // the second comma
    const badStatus = await refusal(() =>
      readCtrf(
        '{ "results": { "tests": [\n  { "name": "a", "status": "passed" },\n  { "name": "b", "status": "exploded" }\n] } }',
      ),
    );
    expect(badStatus.message).to.contain('"exploded"');
    expect(badStatus.details).to.deep.equal({ line: 3, column: 28 }); // the value's opening quote
    const noTests = await refusal(() => readCtrf('{ "results": {} }'));
    expect(noTests.message).to.contain('results.tests');
  });
});
