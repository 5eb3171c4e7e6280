// `otp run` as a CI pipeline uses it: a GitHub-Actions-style job script against a started service and
// a real otp-runner (headless Chromium), a failing plan and a passing one. The exit code is the
// verdict; the JUnit file is read back by an independent parser (junit2json, on xml2js) and the CTRF
// file checked against the CTRF schema by the `ctrf` package's own validator; a secret's value never
// appears in the output.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { validate as validateCtrf } from 'ctrf';
import { parse as parseJunit } from 'junit2json';
import { type RunnerHarness, servePages, startHarness } from '../runner/harness.js';

const SECRET = 'pa55-W0rd-never-printed';
const PAGE = `<!doctype html><html><head><title>Shop</title></head><body>
<label>Password <input id="pw" type="password"></label>
<button onclick="document.getElementById('out').textContent = document.getElementById('pw').value ? 'Signed in' : 'No password'">Sign in</button>
<p id="out" data-testid="out"></p></body></html>`;

function job(env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['test/ci/github-actions-job.sh'], {
      env: { ...process.env, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, output }));
  });
}

describe('otp run in a CI job: exit code, JUnit and CTRF', function () {
  this.timeout(120_000);
  let h: RunnerHarness;
  let pages: Awaited<ReturnType<typeof servePages>>;
  let out: string;

  before(async () => {
    let visits = 0;
    pages = await servePages({
      '/shop': PAGE,
      // Not ready on the first visit: a case that fails once and then passes.
      '/slow-start': (_req, res) => {
        visits++;
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(`<!doctype html><title>Start</title><p id="s">${visits === 1 ? 'loading' : 'ready'}</p>`);
      },
    });
    h = await startHarness();
    out = await fs.mkdtemp(path.join(os.tmpdir(), 'otp-ci-'));
  });
  after(async () => {
    await h?.stop();
    await pages?.close();
    if (out) await fs.rm(out, { recursive: true, force: true });
  });

  async function plan(title: string, expected: string): Promise<string> {
    const steps = [
      { otp: { action: 'navigate', url: pages.url('/shop') } },
      { otp: { action: 'type', locator: { by: 'label', value: 'Password' }, text: '{{APP_PASSWORD}}' } },
      { otp: { action: 'click', locator: { by: 'role', value: 'button', name: 'Sign in' } } },
      { otp: { action: 'assert', kind: 'text', locator: { by: 'testid', value: 'out' }, expected }, timeoutMs: 3000 },
    ];
    const testCase = await h.t.request('POST', '/tests/cases', { key: h.key, body: { title, steps } });
    const created = await h.t.request('POST', '/tests/plans', {
      key: h.key,
      body: { title: `${title} plan`, testCaseIds: [testCase.body.id] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id;
  }

  const env = (planId: string) => ({
    OTP_SERVER_URL: h.t.service.restUrl,
    OTP_KEY: h.key,
    PLAN: planId,
    OUT: out,
    APP_PASSWORD: SECRET,
  });

  it('fails the job (exit 1) when the plan fails, and leaves a JUnit file that says which case and why', async () => {
    const { code, output } = await job(env(await plan('Signs in, greeting checked wrongly', 'Welcome back')));
    expect(code, output).to.equal(1);
    expect(output).to.match(/FAIL {2}Signs in, greeting checked wrongly/);
    expect(output).to.contain('E_ASSERT_FAILED');
    expect(output).not.to.contain(SECRET);

    const junit = await parseJunit(await fs.readFile(path.join(out, 'junit.xml'), 'utf8'));
    expect(junit).to.include({ tests: 1, failures: 1, errors: 0 });
    const testcase = (junit as any).testsuite[0].testcase[0];
    expect(testcase.name).to.equal('Signs in, greeting checked wrongly');
    expect(testcase.classname).to.match(/^tp_/);
    expect(testcase.file).to.match(/^tc_/);
    expect(testcase.failure[0].type).to.equal('E_ASSERT_FAILED');
    expect(testcase.failure[0].message).to.be.a('string').and.not.be.empty;
    // The failing step's screenshot, as a link GitLab and GitHub's report actions show.
    expect(testcase['system-out'].join('\n')).to.match(
      /\[\[ATTACHMENT\|http:\/\/127\.0\.0\.1:\d+\/api\/v1\/assets\/items\/ast_[a-z0-9]+\/download\]\]/,
    );

    const ctrf = JSON.parse(await fs.readFile(path.join(out, 'ctrf.json'), 'utf8'));
    const check = validateCtrf(ctrf);
    expect(check.valid, JSON.stringify(check.errors)).to.equal(true);
    expect(ctrf.results.summary).to.include({ tests: 1, failed: 1, passed: 0 });
    expect(ctrf.results.tests[0]).to.include({ status: 'failed', flaky: false });
    expect(ctrf.results.tests[0].browser).to.be.a('string').and.not.be.empty;
    expect(ctrf.results.tests[0].attachments[0].path).to.match(/\/download$/);
    expect(JSON.stringify(ctrf)).not.to.contain(SECRET);
  });

  it('passes the job (exit 0) when the plan passes', async () => {
    const { code, output } = await job(env(await plan('Signs in', 'Signed in')));
    expect(code, output).to.equal(0);
    expect(output).to.match(/PASS {2}Signs in/);
    expect(output).to.match(/^PASSED: 4 steps passed, 0 failed, 0 skipped/m);
    const junit = await parseJunit(await fs.readFile(path.join(out, 'junit.xml'), 'utf8'));
    expect(junit).to.include({ tests: 1, failures: 0, errors: 0, skipped: 0 });
    expect(validateCtrf(JSON.parse(await fs.readFile(path.join(out, 'ctrf.json'), 'utf8'))).valid).to.equal(true);
  });

  it('with --retries, a case that fails and then passes is FLAKY and passes the job; the reports keep the failed attempt', async () => {
    const steps = [
      { otp: { action: 'navigate', url: pages.url('/slow-start') } },
      {
        otp: { action: 'assert', kind: 'text', locator: { by: 'css', value: '#s' }, expected: 'ready' },
        timeoutMs: 1500,
      },
    ];
    const testCase = await h.t.request('POST', '/tests/cases', { key: h.key, body: { title: 'Starts slowly', steps } });
    const junitFile = path.join(out, 'flaky-junit.xml');
    const ctrfFile = path.join(out, 'flaky-ctrf.json');
    const { code, output } = await runDirect(
      ['run', '--case', testCase.body.id, '--retries', '1', '--junit', junitFile, '--ctrf', ctrfFile],
      { OTP_SERVER_URL: h.t.service.restUrl, OTP_KEY: h.key },
    );
    expect(code, output).to.equal(0);
    expect(output).to.match(/FLAKY {1,2}Starts slowly/);
    expect(output).not.to.match(/FAIL {2}Starts slowly/);
    const junit = (await parseJunit(await fs.readFile(junitFile, 'utf8'))) as any;
    expect(junit).to.include({ tests: 1, failures: 0, errors: 0 });
    const flaky = junit.testsuite[0].testcase[0].flakyFailure;
    expect(flaky, JSON.stringify(junit)).to.have.length(1);
    expect(flaky[0].type).to.equal('E_ASSERT_FAILED');
    const ctrf = JSON.parse(await fs.readFile(ctrfFile, 'utf8'));
    const check = validateCtrf(ctrf);
    expect(check.valid, JSON.stringify(check.errors)).to.equal(true);
    expect(ctrf.results.tests[0]).to.include({ status: 'passed', flaky: true, retries: 1 });
    expect(ctrf.results.tests[0].retryAttempts).to.have.length(1);
  });

  it('refuses --retries outside 0 to 3 (exit 2)', async () => {
    const { code, output } = await runDirect(['run', '--case', 'tc_x', '--retries', '5'], {
      OTP_SERVER_URL: h.t.service.restUrl,
      OTP_KEY: h.key,
    });
    expect(code, output).to.equal(2);
    expect(output).to.contain('--retries takes 0 to 3');
  });

  it('says it could not run (exit 2) when no executor takes the run in time, and cancels it', async () => {
    const { key } = await h.t.newProject('write');
    const testCase = await h.t.request('POST', '/tests/cases', {
      key,
      body: { title: 'nobody runs me', steps: [{ otp: { action: 'navigate', url: pages.url('/shop') } }] },
    });
    // No runner serves this project: the run waits queued until the command gives up.
    const { code, output } = await runDirect(['run', '--case', testCase.body.id, '--timeout', '2'], {
      OTP_SERVER_URL: h.t.service.restUrl,
      OTP_KEY: key,
    });
    expect(code, output).to.equal(2);
    expect(output).to.contain('no executor of the project took it');
    const runs = await h.t.request('GET', '/otp/runs', { key });
    expect(runs.body.items.map((r: { status: string }) => r.status)).to.deep.equal(['cancelled']);
  });

  it('says it could not run (exit 2) when the service refuses the run, with the reason', async () => {
    const { code, output } = await runDirect(['run', '--case', 'tc_unknown'], {
      OTP_SERVER_URL: h.t.service.restUrl,
      OTP_KEY: h.key,
    });
    expect(code, output).to.equal(2);
    expect(output).to.contain('test case tc_unknown not found in this project');
  });
});

function runDirect(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/otp.mjs', ...args], {
      env: { ...process.env, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code: code ?? -1, output }));
  });
}
