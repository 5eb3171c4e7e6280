import { expect } from 'chai';
import { TimerWheel } from '../../src/otp/engine/timer-wheel.js';

// Every test waits for the wheel's own callbacks (events), never for a fixed time.
function firing(wheel: TimerWheel, ms: number): { handle: number; fired: Promise<number> } {
  let handle = 0;
  const fired = new Promise<number>((resolve) => {
    handle = wheel.setTimeout(() => resolve(performance.now()), ms);
  });
  return { handle, fired };
}

describe('TimerWheel (the run actors clock)', () => {
  it('never calls back before the time asked for', async () => {
    const wheel = new TimerWheel(10);
    const asked = performance.now();
    const times = [0, 5, 25, 40].map((ms) => ({ ms, fired: firing(wheel, ms).fired }));
    for (const { ms, fired } of times) expect((await fired) - asked).to.be.at.least(ms);
    expect(wheel.size).to.equal(0);
  });

  it('calls back in the order the times fall, and a cleared callback never', async () => {
    const wheel = new TimerWheel(10);
    const order: string[] = [];
    const cleared = wheel.setTimeout(() => order.push('cleared'), 15);
    wheel.setTimeout(() => order.push('late'), 45);
    wheel.setTimeout(() => order.push('early'), 15);
    wheel.clearTimeout(cleared);
    wheel.clearTimeout(cleared); // twice, or an unknown handle: nothing happens
    wheel.clearTimeout(12345);
    await firing(wheel, 60).fired;
    expect(order).to.deep.equal(['early', 'late']);
  });

  it('goes on after a callback that throws, and reports it', async () => {
    const errors: unknown[] = [];
    const wheel = new TimerWheel(10, (err) => errors.push(err));
    wheel.setTimeout(() => {
      throw new Error('boom');
    }, 10);
    const after = firing(wheel, 10);
    await after.fired;
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['boom']);
  });

  it('keeps turning while a callback is cleared and the next scheduled at once (one run on the wheel), then stops', async () => {
    const wheel = new TimerWheel(10);
    let handle = wheel.setTimeout(() => {}, 1_000);
    for (let step = 0; step < 3; step++) {
      wheel.clearTimeout(handle);
      expect(wheel.turning).to.equal(true);
      handle = wheel.setTimeout(() => {}, 1_000);
    }
    wheel.clearTimeout(handle);
    // Nothing waits: its next turn stops the interval. Awaited through a later callback of another
    // wheel (Node runs timers in the order they fall due).
    await firing(new TimerWheel(10), 30).fired;
    expect(wheel.turning).to.equal(false);
  });

  it('lets a callback clear another of the same tick, and schedule a new one', async () => {
    const wheel = new TimerWheel(10);
    const order: string[] = [];
    let second = 0;
    let resolveNext: () => void;
    const next = new Promise<void>((resolve) => (resolveNext = resolve));
    wheel.setTimeout(() => {
      order.push('first');
      wheel.clearTimeout(second);
      wheel.setTimeout(() => {
        order.push('scheduled by first');
        resolveNext();
      }, 0);
    }, 20);
    second = wheel.setTimeout(() => order.push('second'), 20);
    await next;
    expect(order).to.deep.equal(['first', 'scheduled by first']);
    expect(wheel.size).to.equal(0);
  });
});
