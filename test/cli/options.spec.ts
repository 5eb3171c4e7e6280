// `otp run`'s options: flags, then the environment, then defaults; each mistake a UsageError that says
// what to give instead (the command prints it and exits 2, test/slow/ci-command.spec.ts).
import { expect } from 'chai';
import { parseRunArgs, UsageError } from '../../src/cli/options.js';

const KEY = ['--key', 'svc_pk_k'];

describe('otp run options', () => {
  it('takes the defaults, and leaves out what was not given', () => {
    expect(parseRunArgs(['--case', 'tc_1'], { OTP_KEY: 'svc_pk_env' }, false)).to.deep.equal({
      server: 'http://127.0.0.1:8080',
      auth: { key: 'svc_pk_env' },
      target: { testCaseIds: ['tc_1'] },
      vars: {},
      secretNames: [],
      timeoutMs: 1_800_000,
      tty: false,
    });
  });

  it('lets flags win over the environment, and reads every flag', () => {
    const env = { OTP_KEY: 'svc_pk_env', OTP_SERVER_URL: 'http://env.test', OTP_TIMEOUT: '60', SECRET_PW: 's3' };
    const argv = [...KEY, '--server', 'https://otp.test//', '--case', 'tc_1', '--case', 'tc_2', '--var', 'a=b=c'];
    argv.push('--secret', 'SECRET_PW', '--session', 'ses_1', '--retries', '2', '--junit', 'j.xml', '--ctrf', 'c.json');
    expect(parseRunArgs([...argv, '--timeout', '5'], env, true)).to.deep.equal({
      server: 'https://otp.test',
      auth: { key: 'svc_pk_k' },
      target: { testCaseIds: ['tc_1', 'tc_2'] },
      vars: { a: 'b=c', SECRET_PW: 's3' },
      secretNames: ['SECRET_PW'],
      sessionId: 'ses_1',
      retries: 2,
      junit: 'j.xml',
      ctrf: 'c.json',
      timeoutMs: 5000,
      tty: true,
    });
    expect(parseRunArgs(['--plan', 'tp_1'], env, true)).to.deep.include({
      server: 'http://env.test',
      target: { planId: 'tp_1' },
      timeoutMs: 60_000,
    });
  });

  it('answers help before anything else is checked', () => {
    expect(parseRunArgs(['--help'], {}, false)).to.equal('help');
  });

  it('takes exactly one target: cases, a plan, or labels', () => {
    expect(parseRunArgs([...KEY, '--label', 'smoke', '--label', 'eu'], {}, false)).to.deep.include({
      target: { labels: ['smoke', 'eu'] },
    });
    const one = 'give exactly one of --case, --plan or --label';
    expect(() => parseRunArgs(KEY, {}, false)).to.throw(UsageError, one);
    expect(() => parseRunArgs([...KEY, '--plan', 'tp_1', '--case', 'tc_1'], {}, false)).to.throw(UsageError, one);
    expect(() => parseRunArgs([...KEY, '--plan', 'tp_1', '--label', 'x'], {}, false)).to.throw(UsageError, one);
  });

  it('takes an API key before OAuth client credentials, and needs one of them', () => {
    const creds = { OTP_CLIENT_ID: 'cid', OTP_CLIENT_SECRET: 'cs' };
    expect(parseRunArgs(['--case', 'tc_1'], creds, false)).to.deep.include({
      auth: { clientId: 'cid', clientSecret: 'cs' },
    });
    expect(parseRunArgs(['--case', 'tc_1', '--client-secret', 'flag'], creds, false)).to.deep.include({
      auth: { clientId: 'cid', clientSecret: 'flag' },
    });
    expect(parseRunArgs(['--case', 'tc_1'], { ...creds, OTP_KEY: 'svc_pk_k' }, false)).to.deep.include({
      auth: { key: 'svc_pk_k' },
    });
    expect(() => parseRunArgs(['--case', 'tc_1'], { OTP_CLIENT_ID: 'cid' }, false)).to.throw(
      UsageError,
      'give an API key (--key or OTP_KEY) or OAuth client credentials',
    );
  });

  it('refuses a malformed --var, a --secret the environment lacks, and unknown flags', () => {
    const run = (...more: string[]) => parseRunArgs([...KEY, '--case', 'tc_1', ...more], {}, false);
    expect(() => run('--var', 'novalue')).to.throw(UsageError, '--var takes NAME=VALUE, got "novalue"');
    expect(() => run('--var', '=x')).to.throw(UsageError, '--var takes NAME=VALUE, got "=x"');
    expect(() => run('--secret', 'ABSENT')).to.throw(UsageError, '--secret ABSENT: the environment has no ABSENT');
    expect(() => run('--bogus')).to.throw(UsageError, "Unknown option '--bogus'");
    expect(() => run('--plan')).to.throw(UsageError, "Option '--plan <value>' argument missing");
  });

  it('takes --retries 0 to 3 and a positive --timeout', () => {
    const run = (...more: string[]) => parseRunArgs([...KEY, '--case', 'tc_1', ...more], {}, false);
    expect(run('--retries', '0')).to.include({ retries: 0 });
    for (const bad of ['4', '-1', '1.5', 'x'])
      expect(() => run(`--retries=${bad}`)).to.throw(UsageError, `--retries takes 0 to 3, got "${bad}"`);
    for (const bad of ['0', '-3', 'soon'])
      expect(() => run(`--timeout=${bad}`)).to.throw(UsageError, `--timeout takes seconds, got "${bad}"`);
    expect(() => parseRunArgs([...KEY, '--case', 'tc_1'], { OTP_TIMEOUT: 'never' }, false)).to.throw(
      UsageError,
      '--timeout takes seconds, got "never"',
    );
  });

  it('shows no live bar in CI, even on a terminal', () => {
    expect(parseRunArgs([...KEY, '--case', 'tc_1'], { CI: 'true' }, true)).to.include({ tty: false });
  });
});
