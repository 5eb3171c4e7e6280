// `otp run`'s line for a queued run (src/cli/queue-line.ts) and when Progress prints it.
import { expect } from 'chai';
import { Progress } from '../../src/cli/progress.js';
import { queueLine } from '../../src/cli/queue-line.js';

const NOW = Date.parse('2026-11-26T10:00:00Z');
const at = (ms: number) => new Date(NOW + ms).toISOString();

describe('otp run: the queued line', () => {
  it('says how many runs are ahead and when it should start, as a range of minutes', () => {
    expect(queueLine({ position: 4, estimatedStart: { from: at(120_000), to: at(180_000) } }, NOW)).to.equal(
      'queued: 4 ahead, starts in about 2-3 min',
    );
    expect(queueLine({ position: 0, estimatedStart: { from: at(0), to: at(30_000) } }, NOW)).to.equal(
      'queued: next, starts in under a minute',
    );
    expect(queueLine({ position: 1, estimatedStart: { from: at(60_000), to: at(70_000) } }, NOW)).to.equal(
      'queued: 1 ahead, starts in about 1 min',
    );
    expect(queueLine({ position: 7, estimatedStart: null }, NOW)).to.match(/^queued: 7 ahead \(no estimate yet/);
  });

  it('is printed once per change, not once per poll', () => {
    let out = '';
    const progress = new Progress(
      (text) => (out += text),
      false,
      () => NOW,
    );
    const run = (position: number) => ({
      id: 'otr_1',
      status: 'queued',
      testCases: [],
      steps: [],
      queue: { position, estimatedStart: { from: at(120_000), to: at(180_000) } },
    });
    progress.update(run(4) as never);
    progress.update(run(4) as never);
    progress.update(run(3) as never);
    expect(out).to.equal('queued: 4 ahead, starts in about 2-3 min\nqueued: 3 ahead, starts in about 2-3 min\n');
  });
});

describe('otp run: the queue flags', () => {
  it('sends --group, --priority and --cancel-in-progress (OTP_GROUP for the group), and refuses an unknown class', async () => {
    const { parseRunArgs, UsageError } = await import('../../src/cli/options.js');
    const env = { OTP_KEY: 'svc_pk_env', OTP_GROUP: 'main' };
    const argv = ['--case', 'tc_1', '--priority', 'gate', '--cancel-in-progress'];
    expect(parseRunArgs(argv, env, false)).to.deep.include({
      queue: { group: 'main', priority: 'gate', cancelInProgress: true },
    });
    expect(parseRunArgs(['--case', 'tc_1', '--group', 'pr-7'], env, false)).to.deep.include({
      queue: { group: 'pr-7' },
    });
    expect(() => parseRunArgs(['--case', 'tc_1', '--priority', 'urgent'], env, false)).to.throw(
      UsageError,
      /gate, normal or batch/,
    );
  });
});
