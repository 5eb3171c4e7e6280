// One outcome of a test case through every door (docs/decisions.md, "A test case's outcome"): for a
// table of step patterns, each run by one scripted executor through the real service, the outcome
// REST gives the case (GET /otp/runs/{id} testCases[]) is the one the run's JUnit and CTRF give it,
// the test result the run records, the test run's JUnit and CTRF, release readiness, and `otp run`
// (its line, its exit code, its JUnit and CTRF files).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import type { CaseOutcome } from '../../machines/case-outcome.js';
import { runCommand } from '../../src/cli/run-command.js';
import { eventually } from '../support/eventually.js';
import { type Frame, TestExecutor } from '../support/executor.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A step's label tells the scripted executor what to do with it: pass; fail (E_ASSERT_FAILED);
 * `error:<code>`; fail-once (fail on the first attempt, pass on later ones); hold (never answer: the
 * service times it out); cancel (the run is cancelled while it is in flight). An `eval` step is never
 * sent: the executor declares eval false, so it is skipped for its capability.
 */
type Script = 'pass' | 'fail' | 'error:E_TIMEOUT' | 'error:E_INTERNAL' | 'fail-once' | 'hold' | 'cancel' | 'eval';

interface Pattern {
  name: string;
  steps: Script[];
  retries?: number;
  outcome: CaseOutcome;
  /** Which step decided a failed, error or cancelled case (its number in the case, from 1). */
  failing?: number;
  code?: string;
}

const PATTERNS: Pattern[] = [
  { name: 'passes', steps: ['pass', 'pass'], outcome: 'passed' },
  { name: 'a check fails', steps: ['pass', 'fail', 'pass'], outcome: 'failed', failing: 2, code: 'E_ASSERT_FAILED' },
  {
    name: 'the executor reports E_TIMEOUT',
    steps: ['pass', 'error:E_TIMEOUT'],
    outcome: 'error',
    failing: 2,
    code: 'E_TIMEOUT',
  },
  {
    name: 'the executor reports E_INTERNAL',
    steps: ['error:E_INTERNAL', 'pass'],
    outcome: 'error',
    failing: 1,
    code: 'E_INTERNAL',
  },
  { name: 'the service times a step out', steps: ['pass', 'hold'], outcome: 'error', failing: 2, code: 'E_TIMEOUT' },
  { name: 'only a capability skip', steps: ['eval'], outcome: 'skipped' },
  { name: 'a pass and a capability skip', steps: ['pass', 'eval'], outcome: 'passed' },
  { name: 'passes on a retry', steps: ['pass', 'fail-once'], retries: 1, outcome: 'flaky' },
  { name: 'fails every attempt', steps: ['fail'], retries: 1, outcome: 'failed', failing: 1, code: 'E_ASSERT_FAILED' },
  { name: 'cancelled mid-case', steps: ['pass', 'cancel'], outcome: 'cancelled', failing: 2, code: 'E_CANCELLED' },
];

/** How each door says an outcome: the vocabulary's one projection per format. */
const DOORS: Record<
  Exclude<CaseOutcome, 'pending'>,
  { junit: 'failure' | 'error' | 'skipped' | null; ctrf: string; mark: string; exit: number; readiness: string }
> = {
  passed: { junit: null, ctrf: 'passed', mark: 'PASS', exit: 0, readiness: 'passes' },
  flaky: { junit: null, ctrf: 'passed', mark: 'FLAKY', exit: 0, readiness: 'passes' },
  failed: { junit: 'failure', ctrf: 'failed', mark: 'FAIL', exit: 1, readiness: 'does not pass' },
  error: { junit: 'error', ctrf: 'failed', mark: 'ERROR', exit: 1, readiness: 'does not pass' },
  skipped: { junit: 'skipped', ctrf: 'skipped', mark: 'SKIP', exit: 0, readiness: 'not judged' },
  cancelled: { junit: 'skipped', ctrf: 'skipped', mark: 'CANCELLED', exit: 1, readiness: 'not judged' },
};

const stepOf = (script: Script) =>
  script === 'eval'
    ? { otp: { action: 'eval', script: 'return 1' } }
    : { otp: { action: 'click', locator: { by: 'css', value: '#go' } }, label: script, timeoutMs: 200 };

describe('One outcome of a test case through every door', function () {
  this.timeout(60_000);
  let t: TestService;
  let key: string;
  let executor: TestExecutor;
  let stopped = false;
  const cases = new Map<string, string>();
  const cancels: Array<Promise<unknown>> = [];

  /** The scripted executor: answers every step.exec by its label and attempt, as long as the suite runs. */
  async function perform(): Promise<void> {
    while (!stopped) {
      const exec: Frame | null = await executor.next('step.exec', () => true, 1_000).catch(() => null);
      if (!exec) continue;
      const script = exec.payload.label as Script;
      const attempt = (exec.payload.attempt as number | undefined) ?? 1;
      if (script === 'hold') continue;
      if (script === 'cancel') {
        cancels.push(
          t.request('POST', `/otp/runs/${exec.runId}/cancel`, { key, body: { reason: 'stopped by the test' } }),
        );
        continue;
      }
      if (script === 'pass' || (script === 'fail-once' && attempt > 1)) executor.result(exec, 'pass');
      else if (script === 'fail' || script === 'fail-once')
        executor.result(exec, 'fail', { error: { code: 'E_ASSERT_FAILED', message: 'expected 3 items, saw 2' } });
      else
        executor.result(exec, 'error', { error: { code: script.slice('error:'.length), message: `${script} here` } });
    }
  }

  before(async () => {
    t = await startTestService({ otp: { stepGraceMs: 100 } });
    ({ key } = await t.newProject('admin'));
    for (const p of PATTERNS) {
      const res = await t.request('POST', '/tests/cases', { key, body: { title: p.name, steps: p.steps.map(stepOf) } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      cases.set(p.name, res.body.id);
    }
    executor = await TestExecutor.connect(t.otpUrl, { key });
    await executor.hello({ eval: false, maxParallel: 32 });
    void perform();
  });
  after(async () => {
    stopped = true;
    await Promise.allSettled(cancels);
    executor?.close();
    await t?.stop();
  });

  const get = async (url: string) => {
    const res = await t.request('GET', url, { key });
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };
  const text = async (url: string) => {
    const res = await fetch(`${t.api}${url}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status, url).to.equal(200);
    return res.text();
  };
  /** A JUnit testcase's outcome tag (failure, error, skipped) or null, and its flakyFailure count. */
  const junitOf = (testcase: any) => ({
    tag: (['failure', 'error', 'skipped'] as const).find((tag) => testcase[tag]) ?? null,
    flakyFailures: (testcase.flakyFailure ?? []).length,
    type: testcase.failure?.[0]?.type ?? testcase.error?.[0]?.type,
  });
  const stepName = (p: Pattern, stepIndex: number) => `step ${p.failing} (stepIndex ${stepIndex})`;

  it('gives each pattern one outcome: REST, the run’s JUnit and CTRF, test results, the test run’s reports, readiness', async () => {
    const release = (await t.request('POST', '/releases', { key, body: { name: '1.0', status: 'in_progress' } })).body;
    const testRun = (
      await t.request('POST', '/tests/runs', { key, body: { title: 'outcomes', releaseId: release.id } })
    ).body;
    const runs = await Promise.all(
      PATTERNS.map(async (p) => {
        const res = await t.request('POST', '/otp/runs', {
          key,
          body: {
            testCaseIds: [cases.get(p.name)],
            testRunId: testRun.id,
            ...(p.retries ? { retries: p.retries } : {}),
          },
        });
        expect(res.status, JSON.stringify(res.body)).to.equal(202);
        return res.body.id as string;
      }),
    );
    // Each run's verdict, as the executor hears it.
    await Promise.all(runs.map((id) => executor.next('run.finished', (f) => f.runId === id, 10_000)));
    const results = await eventually(async () => {
      const page = await get(`/tests/results?testRunId=${testRun.id}&limit=100`);
      expect(page.items).to.have.length(PATTERNS.length);
      return new Map<string, any>(page.items.map((r: any) => [r.testCaseId, r]));
    });
    const runJunit: any[] = [];
    const runCtrf: any[] = [];
    for (const id of runs) {
      runJunit.push(((await parseJunit(await text(`/otp/runs/${id}?format=junit`))) as any).testsuite[0].testcase[0]);
      const ctrf = await get(`/otp/runs/${id}?format=ctrf`);
      expect(validateCtrf(ctrf).valid, JSON.stringify(validateCtrf(ctrf).errors)).to.equal(true);
      runCtrf.push(ctrf.results.tests[0]);
    }
    const testRunJunit: any = await parseJunit(await text(`/tests/runs/${testRun.id}?format=junit`));
    const testRunCases = new Map<string, any>(testRunJunit.testsuite[0].testcase.map((c: any) => [c.file, c]));
    const testRunCtrf = await get(`/tests/runs/${testRun.id}?format=ctrf`);
    expect(validateCtrf(testRunCtrf).valid, JSON.stringify(validateCtrf(testRunCtrf).errors)).to.equal(true);
    const testRunTests = new Map<string, any>(testRunCtrf.results.tests.map((c: any) => [c.testId, c]));
    const readiness = await get(`/releases/${release.id}/readiness`);
    const rule = (id: string) => readiness.rules.find((r: any) => r.id === id);
    const notPassed = new Map<string, any>(
      rule('pass_rate')
        .records.filter((r: any) => r.reason === 'not_passed')
        .map((r: any) => [r.id, r]),
    );
    const flakyCases = new Set(rule('flaky_cases').records.map((r: any) => r.id));

    const seen = await Promise.all(
      PATTERNS.map(async (p, i) => {
        const caseId = cases.get(p.name)!;
        const view = await get(`/otp/runs/${runs[i]}`);
        const door = DOORS[p.outcome as Exclude<CaseOutcome, 'pending'>];
        const judged = view.testCases[0];
        const failingIndex = judged.failingStepIndex as number | undefined;
        const result = results.get(caseId);
        const junit = junitOf(runJunit[i]);
        const testRunCase = junitOf(testRunCases.get(caseId));
        const retried = p.retries && p.outcome !== 'passed' ? 1 : 0;
        return {
          pattern: p.name,
          rest: [judged.outcome, failingIndex === undefined ? null : view.steps[failingIndex].error?.code],
          runJunit: [junit.tag, junit.type ?? null, junit.flakyFailures],
          runCtrf: [runCtrf[i].status, runCtrf[i].rawStatus, runCtrf[i].flaky, runCtrf[i].retries],
          result: [result.status, result.failure?.step ?? null, (result.failedAttempts ?? []).length],
          testRunJunit: [testRunCase.tag, testRunCase.type ?? null, testRunCase.flakyFailures],
          testRunCtrf: [
            testRunTests.get(caseId).status,
            testRunTests.get(caseId).flaky,
            testRunTests.get(caseId).retries,
          ],
          readiness: [
            notPassed.has(caseId)
              ? 'does not pass'
              : result && ['passed', 'flaky'].includes(result.status)
                ? 'passes'
                : 'not judged',
            notPassed.get(caseId)?.status ?? null,
            flakyCases.has(caseId),
          ],
          expected: {
            rest: [p.outcome, p.code ?? null],
            runJunit: [door.junit, door.junit === 'failure' || door.junit === 'error' ? p.code : null, retried],
            runCtrf: [door.ctrf, p.outcome, p.outcome === 'flaky', retried],
            result: [p.outcome, p.failing ? stepName(p, failingIndex ?? -1) : null, retried],
            testRunJunit: [door.junit, door.junit === 'failure' || door.junit === 'error' ? p.code : null, retried],
            testRunCtrf: [door.ctrf, p.outcome === 'flaky', retried],
            readiness: [door.readiness, door.readiness === 'does not pass' ? p.outcome : null, p.outcome === 'flaky'],
          },
        };
      }),
    );
    for (const s of seen) {
      const { expected, pattern, ...doors } = s;
      expect(doors, pattern).to.deep.equal(expected);
    }
  });

  it('gives `otp run` the same outcome: its line, its exit code, its JUnit and CTRF files', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-outcomes-'));
    try {
      const answers = await Promise.all(
        PATTERNS.map(async (p, i) => {
          let output = '';
          const io = {
            out: (s: string) => void (output += s),
            err: (s: string) => void (output += s),
            env: {},
            isTty: false,
            interrupted: new Promise<void>(() => {}),
          };
          const junitFile = path.join(dir, `${i}.xml`);
          const ctrfFile = path.join(dir, `${i}.json`);
          const argv = ['--case', cases.get(p.name)!, '--server', t.service.restUrl, '--key', key];
          argv.push('--junit', junitFile, '--ctrf', ctrfFile, ...(p.retries ? ['--retries', String(p.retries)] : []));
          const code = await runCommand(argv, io);
          return { p, code, output, junitFile, ctrfFile };
        }),
      );
      for (const { p, code, output, junitFile, ctrfFile } of answers) {
        const door = DOORS[p.outcome as Exclude<CaseOutcome, 'pending'>];
        expect(code, `${p.name}: ${output}`).to.equal(door.exit);
        const line = output.split('\n').find((l) => l.includes(`${p.name} (tc_`));
        expect(line, `${p.name}: ${output}`).to.match(new RegExp(`^${door.mark} {1,2}${p.name} \\(`));
        if (p.failing)
          expect(line, p.name).to.match(new RegExp(`— step ${p.failing} \\(stepIndex \\d+\\): ${p.code}: `));
        const junit = junitOf(
          ((await parseJunit(await fs.readFile(junitFile, 'utf8'))) as any).testsuite[0].testcase[0],
        );
        expect(junit.tag, p.name).to.equal(door.junit);
        const ctrf = JSON.parse(await fs.readFile(ctrfFile, 'utf8')).results.tests[0];
        expect([ctrf.status, ctrf.rawStatus, ctrf.flaky], p.name).to.deep.equal([
          door.ctrf,
          p.outcome,
          p.outcome === 'flaky',
        ]);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
