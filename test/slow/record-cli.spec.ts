// `otp-runner record` as a person runs it: a child process with a headless browser; Ctrl-C (SIGINT)
// stops the recording and the test case id is printed on stdout.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { type PageServer, servePages } from '../recording/pages.js';
import { startTestService, type TestService } from '../support/service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The runner's CLI dispatches `record` to recordCommand; this runs that function directly.
const ENTRY =
  "import('./src/runner/record/command.ts').then((m) => m.recordCommand(process.argv.slice(1))).then((code) => process.exit(code))";

function runRecord(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', ENTRY, '--', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  const lines: Array<{ match: RegExp; resolve: () => void }> = [];
  child.stderr.on('data', (d) => {
    err += d;
    for (const w of [...lines]) {
      if (!w.match.test(err)) continue;
      lines.splice(lines.indexOf(w), 1);
      w.resolve();
    }
  });
  // A death by signal is named in the output the assertions print.
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      if (signal) err += `[killed by ${signal}]\n`;
      resolve(code);
    }),
  );
  return {
    child,
    exited,
    out: () => out,
    err: () => err,
    stderrMatches: (match: RegExp) =>
      match.test(err) ? Promise.resolve() : new Promise<void>((resolve) => lines.push({ match, resolve })),
  };
}

describe('otp-runner record (command line)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let pages: PageServer;

  before(async () => {
    [svc, pages] = await Promise.all([startTestService(), servePages()]);
  });
  after(async () => {
    await pages?.close();
    await svc?.stop();
  });

  it('records until Ctrl-C and prints the test case id', async () => {
    const rec = runRecord(['--url', `${pages.origin}/login`, '--title', 'From the CLI', '--headless'], {
      OTP_SERVER: svc.otpUrl,
      OTP_KEY: svc.adminKey,
    });
    await Promise.race([
      rec.stderrMatches(/Recording rec_\S+ on session ots_/),
      rec.exited.then((code) => Promise.reject(new Error(`exited ${code}: ${rec.err()}`))),
    ]);
    await rec.stderrMatches(/step 1: navigate/);
    rec.child.kill('SIGINT');
    expect(await rec.exited, rec.err()).to.equal(0);
    const testCaseId = rec.out().trim();
    expect(testCaseId).to.match(/^tc_[a-z0-9]+$/);
    const testCase = await svc.request('GET', `/tests/cases/${testCaseId}`);
    expect(testCase.body).to.include({ title: 'From the CLI' });
    expect(testCase.body.steps).to.deep.equal([{ otp: { action: 'navigate', url: `${pages.origin}/login` } }]);
  });

  it('says what is missing, and refuses a key without write', async () => {
    const missing = runRecord([]);
    expect(await missing.exited).to.equal(2);
    expect(missing.err()).to.contain('missing --key, --url (or --wait)');
    const readKey = await svc.newKey('read');
    const refused = runRecord([
      '--server',
      svc.otpUrl,
      '--key',
      readKey,
      '--url',
      `${pages.origin}/login`,
      '--headless',
    ]);
    expect(await refused.exited).to.equal(1);
    expect(refused.err()).to.match(/otp-runner record: .*(closed|E_AUTH)/);
  });
});
