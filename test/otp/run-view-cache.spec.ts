import { expect } from 'chai';
import { RunViewCache } from '../../src/otp/store/run-view-cache.js';
import type { RunView } from '../../src/otp/store/run-views.js';

function view(id: string, status: string, steps = 1): RunView {
  return {
    id,
    runId: id,
    status,
    steps: Array.from({ length: steps }, (_, i) => ({ stepIndex: i })),
  } as unknown as RunView;
}

describe('RunViewCache', () => {
  it('keeps finished runs only, and answers a hit without loading', async () => {
    const cache = new RunViewCache(1 << 20);
    let loads = 0;
    const load = (v: RunView) => async () => {
      loads++;
      return v;
    };
    await cache.read('p', 'r1', load(view('r1', 'running')));
    await cache.read('p', 'r1', load(view('r1', 'running')));
    expect(loads).to.equal(2);
    const first = await cache.read('p', 'r2', load(view('r2', 'passed')));
    const second = await cache.read('p', 'r2', load(view('r2', 'passed')));
    expect(loads).to.equal(3);
    expect(second).to.equal(first);
    expect(JSON.parse(second.text)).to.include({ id: 'r2', status: 'passed' });
  });

  it('never answers another project from memory', async () => {
    const cache = new RunViewCache(1 << 20);
    await cache.read('p', 'r1', async () => view('r1', 'passed'));
    let loaded = false;
    const error = await Promise.resolve(
      cache.read('q', 'r1', async () => {
        loaded = true;
        throw new Error('Run r1 not found');
      }),
    ).then(
      () => null,
      (err: Error) => err,
    );
    expect(loaded).to.equal(true);
    expect(error?.message).to.equal('Run r1 not found');
  });

  it('drops a run on invalidate, and does not keep a read that began before an invalidation', async () => {
    const cache = new RunViewCache(1 << 20);
    await cache.read('p', 'r1', async () => view('r1', 'passed'));
    cache.invalidate('r1');
    expect(cache.size.runs).to.equal(0);
    let release!: () => void;
    const slow = cache.read(
      'p',
      'r2',
      () => new Promise<RunView>((resolve) => (release = () => resolve(view('r2', 'passed')))),
    );
    cache.invalidate('r2');
    release();
    await slow;
    expect(cache.size.runs).to.equal(0);
  });

  it('reads a run again once its copy is older than maxAgeMs (a lost notice leaves it stale no longer)', async () => {
    let now = 1_000;
    const cache = new RunViewCache(1 << 20, 30, () => now);
    let loads = 0;
    const load = async () => {
      loads++;
      return view('r1', 'passed');
    };
    await cache.read('p', 'r1', load);
    now += 29;
    await cache.read('p', 'r1', load);
    expect(loads).to.equal(1);
    now += 1;
    await cache.read('p', 'r1', load);
    expect(loads).to.equal(2);
  });

  it('holds at most maxBytes of JSON, dropping the least recently read first', async () => {
    const one = JSON.stringify(view('r0', 'passed', 10)).length;
    const cache = new RunViewCache(one * 3);
    for (const id of ['r0', 'r1', 'r2']) await cache.read('p', id, async () => view(id, 'passed', 10));
    await cache.read('p', 'r0', async () => view('r0', 'passed', 10)); // r0 is now the most recent
    await cache.read('p', 'r3', async () => view('r3', 'passed', 10));
    expect(cache.size.runs).to.equal(3);
    expect(cache.size.bytes).to.be.at.most(one * 3);
    const reloaded: string[] = [];
    for (const id of ['r0', 'r2', 'r3', 'r1'])
      await cache.read('p', id, async () => {
        reloaded.push(id);
        return view(id, 'passed', 10);
      });
    expect(reloaded).to.deep.equal(['r1']);
    // A run larger than the whole cache is served but never kept.
    const tiny = new RunViewCache(10);
    await tiny.read('p', 'big', async () => view('big', 'passed', 50));
    expect(tiny.size).to.deep.equal({ runs: 0, bytes: 0 });
  });
});
