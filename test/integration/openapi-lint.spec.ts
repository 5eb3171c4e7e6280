// /openapi.json through the ecosystem's OpenAPI linter (Redocly CLI, recommended rules, redocly.yaml):
// no error and no warning, but the few listed below, each with why it stands. A generated client
// must not meet a member it cannot fill, an operation without an answer, or an undescribed group.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';

/** Problems the linter reports that are the truth about the service; each must still be reported. */
const ACCEPTED: ReadonlyArray<{ rule: string; pointer: string; why: string }> = [
  ...[
    'TestCaseSteps',
    'Envelope',
    ...['Hello', 'Pong', 'Ack', 'Error', 'StepResult', 'EventRecorded', 'RecordStartRequest', 'RecordStopRequest'],
    ...['Welcome', 'Ping', 'RunStart', 'StepExec', 'RunCancel', 'RunFinished', 'RecordStart', 'RecordStop'],
    'Reconnect',
    'ServiceError',
  ].map((name) => ({
    rule: 'no-unused-components',
    pointer: `#/components/schemas/${name.endsWith('Steps') || name === 'Envelope' ? name : `${name}Message`}`,
    why: 'the OTP protocol (frames over the WebSocket at /otp), published for executors: no HTTP operation carries it',
  })),
  {
    rule: 'operation-2xx-response',
    pointer: '#/paths/~1api~1v1~1assets~1items~1{id}~1download/get/responses',
    why: 'the download answers 302 to a signed link (the spec: "302 redirect to a signed URL"), never 2xx itself',
  },
  ...[
    '/openapi.json',
    '/.well-known/oauth-authorization-server/oauth',
    '/oauth/jwks',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
  ].map((p) => ({
    rule: 'operation-4xx-response',
    pointer: `#/paths/${p.replaceAll('/', '~1')}/get/responses`,
    why: 'a public, unauthenticated document with no input: no client error can happen',
  })),
];

const exec = promisify(execFile);
const CLI = path.resolve('node_modules/@redocly/cli/bin/cli.js');

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: Array<{ pointer: string }>;
}

describe('/openapi.json by the OpenAPI linter (Redocly, recommended rules)', () => {
  let t: TestService;
  let dir: string;
  before(async () => {
    t = await startTestService();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'openapi-lint-'));
  });
  after(async () => {
    await t?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('reports no problem but the accepted ones, and each accepted one still stands', async function () {
    this.timeout(60_000);
    const file = path.join(dir, 'openapi.json');
    await fs.writeFile(file, JSON.stringify((await t.request('GET', '/openapi.json', { key: null })).body));
    // The linter exits 1 when it finds a problem: its JSON report is read either way.
    const run = await exec(process.execPath, [CLI, 'lint', file, '--config', 'redocly.yaml', '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 << 20,
    }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
    const problems = (JSON.parse(run.stdout) as { problems: Problem[] }).problems.map(
      (p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`,
    );
    const accepted = (p: string) => ACCEPTED.some((a) => p.startsWith(`${a.rule} ${a.pointer}:`));
    expect(problems.filter((p) => !accepted(p))).to.deep.equal([]);
    for (const a of ACCEPTED)
      expect(
        problems.some((p) => p.startsWith(`${a.rule} ${a.pointer}:`)),
        `${a.rule} ${a.pointer}`,
      ).to.equal(true);
  });
});
