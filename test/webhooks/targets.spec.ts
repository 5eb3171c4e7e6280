// Which addresses a webhook may reach, and the retry schedule: pure rules, no service.
import { expect } from 'chai';
import { checkTargetUrl, refusedKind, TargetRefused } from '../../src/artifacts/webhooks/targets.js';
import { retryDelay } from '../../src/webhook-delivery/dispatcher.js';

describe('Webhook targets and retries', () => {
  it('names the kind of every address a webhook may not reach, and lets public ones through', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1', 'loopback'],
      ['127.8.9.10', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['fd00::1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['100.64.0.1', 'shared (carrier-grade NAT)'],
      ['224.0.0.1', 'multicast'],
      ['8.8.8.8', null],
      ['172.32.0.1', null],
      ['2606:4700::1111', null],
      ['::ffff:8.8.8.8', null],
    ];
    for (const [address, kind] of cases) expect(refusedKind(address), address).to.equal(kind);
  });

  it('checks a url when a subscription is written: literal addresses and names that resolve', async () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://[::1]/',
      'http://10.0.0.1/',
      'http://169.254.169.254/latest',
      'http://localhost:8080/',
      'http://2130706433/',
    ]) {
      const err = await checkTargetUrl(url, false).then(
        () => null,
        (e) => e,
      );
      expect(err, url).to.be.instanceOf(TargetRefused);
    }
    const refused = (await checkTargetUrl('http://localhost/', false).catch((e) => e)).message;
    expect(refused).to.match(/^localhost resolves to a loopback address;/);
    expect(refused, 'the resolved address is not told').not.to.match(/127\.0\.0\.1|::1/);
    await checkTargetUrl('https://8.8.8.8/hook', false);
    await checkTargetUrl('http://127.0.0.1/', true);
  });

  it('waits by the schedule, jittered within its bounds, and gives up after its last entry', () => {
    const config = { retryScheduleMs: [1000, 4000], jitter: 0.2 };
    expect(retryDelay(config, 1, () => 0)).to.equal(800);
    expect(retryDelay(config, 1, () => 1)).to.equal(1200);
    expect(retryDelay(config, 2, () => 0.5)).to.equal(4000);
    expect(retryDelay(config, 3)).to.equal(null);
  });
});
