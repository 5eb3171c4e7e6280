// JUnit and CTRF of a run, from its REST view: every outcome a case can have, text that XML cannot
// hold as it is, read back by an independent JUnit parser (junit2json) and the CTRF validator.
import { expect } from 'chai';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import type { ReportedRun } from '../../src/reports/case-results.js';
import { runToCtrf } from '../../src/reports/ctrf.js';
import { runToJunit } from '../../src/reports/junit.js';

const step = (
  stepIndex: number,
  caseIndex: number,
  status: string,
  error?: { code: string; message: string },
  extra: Partial<ReportedRun['steps'][number]> = {},
) => ({
  stepIndex,
  caseIndex,
  label: null,
  action: { action: 'click' },
  status,
  durationMs: 100,
  error: error ?? null,
  actual: null,
  evidence: null,
  ...extra,
});

const HOSTILE = 'expected <b>"3 items" & more</b>\u0000\u0001 got \uD800 two';

const run: ReportedRun = {
  id: 'otr_1',
  status: 'error',
  planId: 'tp_1',
  reason: 'executor connection lost',
  testCases: [
    { id: 'tc_pass', title: 'Passes', steps: 2 },
    { id: 'tc_fail', title: 'Fails <check>', steps: 2 },
    { id: 'tc_err', title: 'Times out', steps: 1 },
    { id: 'tc_lost', title: 'Never ran', steps: 1 },
    { id: 'tc_skip', title: 'Cannot run here', steps: 1 },
  ],
  createdAt: '2026-11-25T10:00:00.000Z',
  startedAt: '2026-11-25T10:00:01.000Z',
  finishedAt: '2026-11-25T10:00:05.500Z',
  durationMs: 4500,
  steps: [
    step(0, 0, 'pass'),
    step(1, 0, 'pass'),
    step(2, 1, 'pass'),
    step(
      3,
      1,
      'fail',
      { code: 'E_ASSERT_FAILED', message: HOSTILE },
      { actual: '2 items', evidence: { screenshotUrl: '/api/v1/assets/items/ast_1/download' } },
    ),
    step(4, 2, 'error', { code: 'E_TIMEOUT', message: 'no result in time' }),
    step(5, 3, 'skip', { code: 'E_INTERNAL', message: 'executor connection lost' }),
    step(6, 4, 'skip', { code: 'E_CAPABILITY', message: 'the executor declared capability eval false' }),
  ],
};

describe('Reports of a run: JUnit XML and CTRF', () => {
  it('writes JUnit that an independent parser reads: a failure, an error, a skip, attachments, hostile text kept readable', async () => {
    const xml = runToJunit(run, 'http://svc:8080');
    const parsed: any = await parseJunit(xml);
    expect(parsed).to.include({ tests: 5, failures: 1, errors: 2, skipped: 1, time: 4.5 });
    const cases = parsed.testsuite[0].testcase;
    expect(cases.map((c: any) => c.name)).to.deep.equal([
      'Passes',
      'Fails <check>',
      'Times out',
      'Never ran',
      'Cannot run here',
    ]);
    expect(cases.map((c: any) => c.classname)).to.deep.equal(['tp_1', 'tp_1', 'tp_1', 'tp_1', 'tp_1']);
    expect(cases[0]).not.to.have.any.keys('failure', 'error', 'skipped');
    expect(cases[1].failure[0]).to.include({
      type: 'E_ASSERT_FAILED',
      message: 'expected <b>"3 items" & more</b> got  two',
    });
    expect(cases[1]['system-out'][0]).to.contain('[[ATTACHMENT|http://svc:8080/api/v1/assets/items/ast_1/download]]');
    expect(cases[1]['system-out'][0]).to.contain('(actual: 2 items)');
    expect(cases[2].error[0]).to.include({ type: 'E_TIMEOUT' });
    // A case the service could not send a step of (its executor was lost) is an error, not a skip.
    expect(cases[3].error[0]).to.include({ type: 'E_INTERNAL', message: 'executor connection lost' });
    expect(cases[4].skipped[0]).to.include({ message: 'executor connection lost' });
    expect(parsed.testsuite[0].properties.find((p: any) => p.name === 'url').value).to.equal(
      'http://svc:8080/console/runs/otr_1',
    );
  });

  it('writes a CTRF report the CTRF schema accepts, with the same outcomes', () => {
    const report = runToCtrf(run, { baseUrl: 'http://svc:8080', browser: 'otp-runner 0.1.0' });
    const check = validateCtrf(report);
    expect(check.valid, JSON.stringify(check.errors)).to.equal(true);
    expect(report.results.summary).to.include({
      tests: 5,
      passed: 1,
      failed: 3,
      skipped: 1,
      pending: 0,
      start: Date.parse(run.startedAt!),
      stop: Date.parse(run.finishedAt!),
    });
    expect(report.results.tests.map((t) => [t.testId, t.status, t.rawStatus])).to.deep.equal([
      ['tc_pass', 'passed', 'passed'],
      ['tc_fail', 'failed', 'failed'],
      ['tc_err', 'failed', 'error'],
      ['tc_lost', 'failed', 'error'],
      ['tc_skip', 'skipped', 'skipped'],
    ]);
    expect(report.results.tests[1]).to.deep.include({
      browser: 'otp-runner 0.1.0',
      attachments: [
        { name: 'screenshot 1', contentType: 'image/png', path: 'http://svc:8080/api/v1/assets/items/ast_1/download' },
      ],
    });
  });
});
