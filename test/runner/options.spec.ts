// The runner's options (flags, then environment, then defaults) and the comparison rules of asserts.
import { expect } from 'chai';
import { holds } from '../../src/runner/asserts.js';
import { parseRunnerArgs, UsageError } from '../../src/runner/options.js';
import { fileName } from '../../src/runner/service-rest.js';

describe('otp-runner options', () => {
  it('takes OTP_SERVER, OTP_KEY and the others from the environment, with defaults', () => {
    expect(parseRunnerArgs([], { OTP_KEY: 'svc_pk_x' })).to.deep.equal({
      server: 'ws://127.0.0.1:8081/otp',
      key: 'svc_pk_x',
      maxParallel: 1,
      allowEval: false,
      chromium: undefined,
      name: undefined,
      project: undefined,
      api: undefined,
      headed: false,
    });
    const env = {
      OTP_KEY: 'k',
      OTP_SERVER: 'wss://otp.test/otp',
      OTP_MAX_PARALLEL: '4',
      OTP_ALLOW_EVAL: '1',
      OTP_API: 'https://otp.test',
      OTP_HEADED: 'true',
    };
    expect(parseRunnerArgs([], env)).to.include({
      server: 'wss://otp.test/otp',
      maxParallel: 4,
      allowEval: true,
      api: 'https://otp.test',
      headed: true,
    });
  });

  it('lets flags win over the environment', () => {
    const options = parseRunnerArgs(
      [
        '--server',
        'ws://h:1/otp',
        '--key',
        'flag',
        '--max-parallel',
        '8',
        '--allow-eval',
        '--chromium',
        '/x/chrome',
        '--name',
        'n',
        '--project',
        'prj_1',
        '--api',
        'http://h:2',
        '--headed',
      ],
      { OTP_KEY: 'env', OTP_SERVER: 'ws://other/otp', OTP_MAX_PARALLEL: '2' },
    );
    expect(options).to.deep.equal({
      server: 'ws://h:1/otp',
      key: 'flag',
      maxParallel: 8,
      allowEval: true,
      chromium: '/x/chrome',
      name: 'n',
      project: 'prj_1',
      api: 'http://h:2',
      headed: true,
    });
  });

  it('refuses bad usage with a clear message, and answers help', () => {
    expect(() => parseRunnerArgs([], {})).to.throw(UsageError, '--key KEY or OTP_KEY');
    expect(() => parseRunnerArgs(['--key', 'k', '--max-parallel', '0'], {})).to.throw(
      UsageError,
      '--max-parallel must be an integer from 1 to 64',
    );
    expect(() => parseRunnerArgs(['--key', 'k', '--server', 'http://x'], {})).to.throw(UsageError, 'ws:// or wss://');
    expect(() => parseRunnerArgs(['--key', 'k', '--bogus'], {})).to.throw(UsageError, "Unknown option '--bogus'");
    expect(parseRunnerArgs(['--help'], {})).to.equal('help');
  });
});

describe('otp-runner assert comparisons', () => {
  it('compares with each op, numbers for count, and says why a comparison is impossible', () => {
    expect(holds('text', 'equals', 'a b', 'a b')).to.equal(true);
    expect(holds('text', 'contains', 'hello world', 'lo w')).to.equal(true);
    expect(holds('text', 'matches', 'order 42', '\\d+$')).to.equal(true);
    expect(holds('count', 'equals', '3', '03')).to.equal(true);
    expect(holds('count', 'gt', '3', '2')).to.equal(true);
    expect(holds('count', 'lt', '3', '3')).to.equal(false);
    expect(holds('text', 'matches', 'x', '(')).to.match(/not a valid regular expression/);
    expect(holds('count', 'gt', '3', 'many')).to.match(/must be a number/);
    expect(holds('checked', 'equals', 'unchecked', undefined)).to.equal(false);
  });

  it('reads the file name of a download', () => {
    expect(fileName(`attachment; filename="a_b.txt"; filename*=UTF-8''a%C3%A9b.txt`)).to.equal('aéb.txt');
    expect(fileName('inline; filename="plain.png"')).to.equal('plain.png');
    expect(fileName(null)).to.equal(undefined);
  });
});
