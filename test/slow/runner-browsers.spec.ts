// Slow runner checks: the npm-shipped Chromium (@sparticuz/chromium) launches and runs a step when no
// system browser is used, and the otp-runner command itself (bin/otp-runner.mjs, a child process)
// performs a run from OTP_SERVER / OTP_KEY alone and stops cleanly on SIGINT.

import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { findChromium, npmChromium } from '../../src/runner/browser.js';
import { servePages, startHarness, step } from '../runner/harness.js';
import { startTestService, type TestService } from '../support/service.js';

describe('otp-runner, slow: the npm-shipped Chromium and the command', function () {
  this.timeout(120_000);
  let t: TestService;
  let site: Awaited<ReturnType<typeof servePages>>;
  before(async () => {
    t = await startTestService();
    site = await servePages({
      '/': '<title>Fallback</title><button onclick="this.textContent = \'done\'">Go</button>',
    });
  });
  after(async () => {
    await site?.close();
    await t?.stop();
  });

  it('runs steps in the Chromium of @sparticuz/chromium (the fallback without a system browser)', async () => {
    // With no system browser where the runner looks, it takes the npm package's Chromium.
    const found = await findChromium(undefined, []);
    expect(found.source).to.equal('npm');
    const executable = found.path;
    expect(executable)
      .to.equal(await npmChromium())
      .and.not.equal('/usr/bin/chromium');
    const h = await startHarness({ chromium: executable }, t);
    try {
      expect(h.runner.chromium).to.deep.equal({ path: executable, source: 'option' });
      const run = await h.run([
        step({ action: 'navigate', url: site.url('/') }),
        step({ action: 'click', locator: { by: 'role', value: 'button', name: 'Go' } }),
        step({ action: 'assert', kind: 'text', locator: { by: 'role', value: 'button' }, expected: 'done' }),
        step({ action: 'screenshot', fullPage: true }),
      ]);
      expect(run.status, JSON.stringify(run.steps.map((s: any) => s.error))).to.equal('passed');
      expect(run.steps[3].evidence.screenshotAssetId).to.match(/^ast_/);
    } finally {
      await h.stop();
    }
  });

  it('otp-runner (the bin) takes OTP_SERVER and OTP_KEY, performs a run and stops on SIGINT', async () => {
    const { key } = await t.newProject('write');
    const child = spawn(process.execPath, ['bin/otp-runner.mjs', '--name', 'cli-test'], {
      env: { ...process.env, OTP_SERVER: t.otpUrl, OTP_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const ready = new Promise<void>((resolve) => {
      child.stderr.on('data', (d) => {
        output += d;
        if (/session ots_\w+: ready/.test(output)) resolve();
      });
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await ready;
      const testCase = await t.request('POST', '/tests/cases', {
        key,
        body: {
          title: 'cli',
          steps: [
            { otp: { action: 'navigate', url: site.url('/') } },
            { otp: { action: 'assert', kind: 'title', expected: 'Fallback' } },
          ],
        },
      });
      const run = await t.request('POST', '/otp/runs', { key, body: { testCaseIds: [testCase.body.id] } });
      const finished = new RegExp(`run ${run.body.runId}: passed`);
      await new Promise<void>((resolve) => {
        if (finished.test(output)) return resolve();
        child.stderr.on('data', () => finished.test(output) && resolve());
      });
      const sessions = await t.request('GET', '/otp/sessions', { key });
      expect(sessions.body.items.map((s: any) => s.name)).to.deep.equal(['cli-test']);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited, output).to.equal(0);
  });
});

describe('otp-runner, slow: eight runs at once in one runner', function () {
  this.timeout(120_000);

  it('holds eight parallel contexts, each with its own storage, and every run passes', async () => {
    const page = `<!doctype html><title>Store</title><label for="v">Value</label><input id="v">
      <button onclick="localStorage.setItem('who', document.getElementById('v').value); document.cookie = 'who=' + document.getElementById('v').value">Keep</button>
      <p id="kept"></p><script>document.getElementById('kept').textContent = (localStorage.getItem('who') || 'none') + '/' + (document.cookie || 'none')</script>`;
    const pages = await servePages({ '/': page });
    const h = await startHarness({ maxParallel: 8 });
    try {
      // Eight contexts open at once on the first navigate: on a busy 2-core machine that alone can take
      // longer than the short time-out of the other steps; and eight pages acting at once in one
      // browser there answer a step in more than the default 3 s (what is tested is that each run
      // keeps its own storage and passes, not how fast).
      const slow = { timeoutMs: 15_000 };
      const runOf = (value: string) => [
        step({ action: 'navigate', url: pages.url('/') }, { timeoutMs: 30_000 }),
        step({ action: 'assert', kind: 'text', locator: { by: 'css', value: '#kept' }, expected: 'none/none' }, slow),
        step({ action: 'type', locator: { by: 'label', value: 'Value' }, text: value }, slow),
        step({ action: 'click', locator: { by: 'role', value: 'button', name: 'Keep' } }, slow),
        step({ action: 'wait', ms: 300 }),
        step({ action: 'navigate', url: pages.url('/') }, slow),
        step(
          { action: 'assert', kind: 'text', locator: { by: 'css', value: '#kept' }, expected: `${value}/who=${value}` },
          slow,
        ),
      ];
      const started = await Promise.all(Array.from({ length: 8 }, (_, i) => h.start(runOf(`run${i}`))));
      let most = 0;
      const watch = () => (most = Math.max(most, h.runner.activeRuns));
      h.runner.on('step', watch);
      const runs = await Promise.all(started.map((s) => s.finished));
      const failures = runs.flatMap((r) =>
        r.steps
          .filter((s: any) => s.status !== 'pass')
          .map((s: any) => `step ${s.stepIndex}: ${s.status} ${JSON.stringify(s.error)}`),
      );
      expect(
        runs.map((r) => r.status),
        failures.join('\n'),
      ).to.deep.equal(Array(8).fill('passed'));
      expect(runs.map((r) => r.steps[6].actual)).to.deep.equal(
        Array.from({ length: 8 }, (_, i) => `run${i}/who=run${i}`),
      );
      expect(most).to.equal(8);
    } finally {
      await h.stop();
      await pages.close();
    }
  });
});
